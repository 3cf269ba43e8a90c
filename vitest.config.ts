import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Compiles the server and CLI once per run; process tests run the build (test/setup/build.ts).
    // Installs the Bun agent's reader for the compatibility suite (test/setup/omp-reader.ts).
    globalSetup: ['test/setup/build.ts', 'test/setup/omp-reader.ts'],
    // Most suites wait on sockets, child processes and fsync rather than the CPU: three workers
    // keep both cores of a small machine busy.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
