/**
 * `npm start` compiles only when dist/ is missing or older than a source file, and sizes the
 * thread pool before its first use.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

interface StartScript {
  isStale: (root: string) => boolean
  buildIfStale: (root: string) => boolean
}
const script = '../../scripts/start.mjs'
const { isStale, buildIfStale } = await import(script) as StartScript

let root: string

function file (path: string, secondsAgo: number): void {
  const full = join(root, path)
  mkdirSync(join(full, '..'), { recursive: true })
  writeFileSync(full, '')
  const at = Date.now() / 1000 - secondsAgo
  utimesSync(full, at, at)
  utimesSync(join(full, '..'), at, at)
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'start-'))
  file('package.json', 100)
  file('tsconfig.json', 100)
  file('src/server.ts', 100)
  file('routes/health.ts', 100)
})
afterEach(() => { rmSync(root, { recursive: true, force: true }) })

describe('npm start', () => {
  it('builds when there is no dist/', () => {
    expect(isStale(root)).toBe(true)
  })

  it('does not build when dist/ is newer than every source file', () => {
    file('dist/src/server.js', 10)
    expect(isStale(root)).toBe(false)
    // No build runs: there is no package.json script to run in this root, so a build would fail the process.
    expect(buildIfStale(root)).toBe(false)
  })

  it('builds when a source file changed after the build', () => {
    file('dist/src/server.js', 10)
    file('src/session/parser.ts', 1)
    expect(isStale(root)).toBe(true)
  })

  it('builds when a route or the compiler settings changed after the build', () => {
    file('dist/src/server.js', 10)
    file('routes/events.ts', 1)
    expect(isStale(root)).toBe(true)
    file('dist/src/server.js', 0)
    expect(isStale(root)).toBe(false)
    file('tsconfig.build.json', -5)
    expect(isStale(root)).toBe(true)
  })
})

describe('npm start\'s thread pool', () => {
  const entry = fileURLToPath(new URL('../../scripts/start.cjs', import.meta.url))
  // Loads the entry without starting (it starts only as the main module), uses the pool once and
  // prints the process's thread count: the pool's threads exist from its first use on.
  const probe = `require(${JSON.stringify(entry)}); require('node:fs').promises.readFile(${JSON.stringify(entry)})` +
    ".then(() => console.log(require('node:fs').readdirSync('/proc/self/task').length))"
  const threads = (env: Record<string, string>): number => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'UV_THREADPOOL_SIZE'))
    return Number(execFileSync(process.execPath, ['-e', probe], { env: { ...base, ...env }, encoding: 'utf8' }).trim())
  }

  it('is what package.json starts', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }
    expect(pkg.scripts.start).toBe('node scripts/start.cjs')
  })

  it('runs 64 threads unless UV_THREADPOOL_SIZE says otherwise', () => {
    // Same process apart from the pool: 64 threads instead of the 4 asked for.
    expect(threads({}) - threads({ UV_THREADPOOL_SIZE: '4' })).toBe(60)
  })
})

describe('npm start\'s descriptor limit', () => {
  interface Limits { soft: number, hard: number }
  const { descriptorLimits, raiseDescriptorLimit } = createRequire(import.meta.url)('../../scripts/start.cjs') as {
    descriptorLimits: (pid?: number) => Limits | undefined
    raiseDescriptorLimit: (pid?: number) => Limits | undefined
  }

  it('raises the soft limit of a process to its hard one, in place', async () => {
    // A process started with a low soft limit, like a shell's `ulimit -Sn` leaves it.
    const child = spawn('sh', ['-c', 'ulimit -Sn 128; exec sleep 30'], { stdio: 'ignore' })
    try {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const before = descriptorLimits(child.pid)
      expect(before?.soft).toBe(128)
      const after = raiseDescriptorLimit(child.pid)
      expect(after?.soft).toBe(before?.hard)
      expect(descriptorLimits(child.pid)).toEqual({ soft: before?.hard, hard: before?.hard })
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('leaves a limit alone when the soft one is the hard one already', () => {
    const limits = descriptorLimits()
    expect(limits?.soft).toBe(limits?.hard)
    expect(raiseDescriptorLimit()).toEqual(limits)
  })
})
