#!/usr/bin/env node
/**
 * `npm start` (through `start.cjs`, which sizes the thread pool first): compiles the TypeScript
 * (`npm run build`) only when `dist/` is missing or older than a source file, then runs the
 * compiled server in this same process, so signals and exit codes are the server's own. A start
 * with an up-to-date `dist/` costs a few directory reads.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

/** What the build reads: a change to any of these makes `dist/` stale. */
const SOURCES = ['src', 'routes', 'tsconfig.json', 'tsconfig.build.json', 'package.json']

/** The build output whose age stands for all of `dist/` (tsc writes every file on each build). */
export const BUILT = join('dist', 'src', 'server.js')

/** Newest modification time (ms) under `path`, a file or a directory; 0 when it is missing. */
function newest (path) {
  let stat
  try {
    stat = statSync(path)
  } catch {
    return 0
  }
  if (!stat.isDirectory()) return stat.mtimeMs
  let max = stat.mtimeMs // a deleted or renamed file changes its directory's time
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)))
  return max
}

/** True when `root` has no `dist/` build, or a source file changed after it was built. */
export function isStale (root = ROOT) {
  const built = newest(join(root, BUILT))
  if (built === 0) return true
  return SOURCES.some((source) => newest(join(root, source)) > built)
}

/** Builds `root` when stale; returns true when it compiled. Exits the process if the build fails. */
export function buildIfStale (root = ROOT) {
  if (!isStale(root)) return false
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const result = spawnSync(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) {
    process.stderr.write('session-store: the build failed (npm run build)\n')
    process.exit(result.status ?? 1)
  }
  return true
}

/** Builds when stale, then runs the server; `--build-only`: what the first start compiles, without starting. */
export async function main () {
  buildIfStale()
  if (!process.argv.includes('--build-only')) await import(pathToFileURL(join(ROOT, BUILT)).href)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main()
