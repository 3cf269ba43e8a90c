/** `npm start` compiles only when dist/ is missing or older than a source file. */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
