import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Compiles the server and CLI once per run; process tests run the build (test/setup/build.ts).
    globalSetup: ['test/setup/build.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
