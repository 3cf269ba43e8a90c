import { configDefaults, defineConfig } from 'vitest/config'

// Compiles the server and CLI once per run; process tests run the build (test/setup/build.ts).
// Installs the Bun agent's reader for the compatibility suite (test/setup/omp-reader.ts).
// With TEST_STORAGE=postgres, one database for the run (test/setup/pg-database.ts).
const globalSetup = ['test/setup/build.ts', 'test/setup/omp-reader.ts', 'test/setup/pg-database.ts']

/**
 * Suites that run a second time with every test app on PostgreSQL (TEST_STORAGE=postgres,
 * test/helpers/app.ts): the HTTP API and its contract, so both storages answer alike.
 */
const POSTGRES_SUITES = ['test/http/**/*.test.ts', 'test/contract/**/*.test.ts']

/**
 * Contract files that never build a test app, so TEST_STORAGE changes nothing in them: the
 * document's own checks, and the generated clients and the contract client run against
 * test/contract/contract-server.ts, which serves the disk storage. A second run would repeat
 * them word for word (and regenerate the generated client into the directory the first run reads).
 */
const STORAGE_FREE_SUITES = [
  'test/contract/generated-client.test.ts',
  'test/contract/openapi-client.test.ts',
  'test/contract/openapi-types.test.ts',
  'test/contract/openapi-validator.test.ts',
]

export default defineConfig({
  test: {
    // Most suites wait on sockets, child processes and fsync rather than the CPU: three workers
    // keep both cores of a small machine busy.
    maxWorkers: 3,
    // A worker keeps the modules it has loaded from one file to the next instead of loading the
    // server's whole module graph again for each: that loading was over half of the suite's CPU.
    // Every file closes what it opens and restores what it changes (env, timers, spies).
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'], globalSetup } },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: POSTGRES_SUITES,
          exclude: [...configDefaults.exclude, ...STORAGE_FREE_SUITES],
          env: { TEST_STORAGE: 'postgres' },
          globalSetup,
        },
      },
    ],
  },
})
