/**
 * The compiled server and CLI of this test run (made once by test/setup/build.ts), for tests
 * that start the real process.
 */
import { join } from 'node:path'
import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The compiled repository root: `<buildDir>/src/server.js`, `<buildDir>/src/cli/main.js`. */
    buildDir: string
  }
}

/** `<buildDir>/src/server.js`, the compiled `src/server.ts`. */
export const builtServer = (): string => join(inject('buildDir'), 'src', 'server.js')

/** `<buildDir>/src/cli/main.js`, the compiled `src/cli/main.ts`. */
export const builtCli = (): string => join(inject('buildDir'), 'src', 'cli', 'main.js')
