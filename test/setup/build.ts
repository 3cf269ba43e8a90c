/**
 * One build of the server and CLI per test run: `tsconfig.build.json` (what `npm run build`
 * compiles into dist/) compiled into node_modules/.cache/session-store-test, so tests that start
 * the real process run it with plain node, as `npm start` and the installed CLI do, instead of
 * compiling TypeScript in every child process. The build is incremental (only changed sources
 * are compiled again) and its output directory is the test run's alone: `npm run build`, which
 * writes dist/, never changes it under a running process.
 * A build that fails stops the run: no test silently falls back to the sources. Every project
 * of the run lists this setup; the build is made once, by the first, and provided to each.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import type {} from '../helpers/build.js'

const ROOT = join(import.meta.dirname, '..', '..')
export const BUILD_DIR = join(ROOT, 'node_modules', '.cache', 'session-store-test')

/** Set on the process once the run's build is made, so that the next project's setup reuses it. */
const BUILT = Symbol.for('session-store.test-build')

export default function setup (project: TestProject): () => void {
  const state = globalThis as { [BUILT]?: true }
  if (state[BUILT] !== true) {
    build()
    state[BUILT] = true
  }
  project.provide('buildDir', BUILD_DIR)
  // At the end of the run (or a restart in watch mode), the next run builds again.
  return () => { delete state[BUILT] }
}

function build (): void {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const info = join(BUILD_DIR, '.tsbuildinfo')
  // The build info vouches for outputs that may have been deleted since: without both, start over.
  if (!existsSync(info) || !existsSync(join(BUILD_DIR, 'src', 'cli', 'main.js'))) rmSync(BUILD_DIR, { recursive: true, force: true })
  const res = spawnSync(process.execPath, [
    tsc, '-p', 'tsconfig.build.json', '--outDir', BUILD_DIR,
    '--incremental', '--tsBuildInfoFile', info, '--declaration', 'false', '--sourceMap', 'false',
  ], { cwd: ROOT, encoding: 'utf8' })
  if (res.status !== 0) throw new Error(`the build for the tests failed (tsc -p tsconfig.build.json):\n${res.stdout}${res.stderr}`)
}
