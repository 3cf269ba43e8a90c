#!/usr/bin/env node
/**
 * The `session-store` executable (package.json `bin`). It runs the compiled CLI,
 * `dist/src/cli/main.js` (made by `npm run build`). In a checkout where nothing was built yet
 * (`npm ci` does not build), it runs the TypeScript source through tsx, a dev dependency,
 * in this same process, so signals and exit codes are the CLI's own.
 */
import { existsSync } from 'node:fs'

const built = new URL('../dist/src/cli/main.js', import.meta.url)
const source = new URL('../src/cli/main.ts', import.meta.url)

if (existsSync(built)) {
  await import(built.href)
} else {
  let register
  try {
    if (!existsSync(source)) throw new Error('no source')
    ;({ register } = await import('tsx/esm/api'))
  } catch {
    process.stderr.write("session-store: not built: run 'npm run build' (or install the dev dependencies to run from source)\n")
    process.exit(1)
  }
  register()
  await import(source.href)
}
