/**
 * A clone of this repository anywhere passes `npm ci && npm test` alone: no tracked file names a
 * path outside the repository, and every file the repository's own paths point at is tracked.
 * The scanner (test/helpers/repo-paths.ts) is itself tested against the references that once
 * broke a clone (fixtures read from a directory beside the checkout). Its examples are built from
 * parts, so that this file itself spells no path that leaves the repository.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { escapingSymlinks, scanFile, type Finding, type ScanOptions } from './helpers/repo-paths.js'

const ROOT = join(import.meta.dirname, '..')

/** Tracked files are the clone: `git ls-files` of this checkout (a clone has the same list). */
const TRACKED = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter((p) => p !== '')
/** This file's own examples of what the scanner must find. */
const SELF = 'test/self-contained.test.ts'
/** Recorded agent sessions: data whose text mentions the paths of the machine they came from. */
const DATA = (path: string): boolean => path.startsWith('test/fixtures/') || path === 'package-lock.json'

function isText (path: string): boolean {
  const full = join(ROOT, path)
  try {
    if (!statSync(full).isFile()) return false
  } catch {
    return false
  }
  return !readFileSync(full).subarray(0, 8000).includes(0)
}

describe('the repository is self-contained', () => {
  it('tracks its fixtures under test/fixtures', () => {
    expect(TRACKED.filter((p) => p.startsWith('test/fixtures/')).sort()).toEqual([
      'test/fixtures/API.md',
      'test/fixtures/pi-v1-before-compaction.jsonl',
      'test/fixtures/pi-v1-large-session.jsonl',
    ])
  })

  it('no tracked file names a path outside the repository or an untracked file in it', () => {
    const options: ScanOptions = { root: ROOT, tracked: new Set(TRACKED) }
    const scanned = TRACKED.filter((p) => !DATA(p) && p !== SELF && isText(p))
    expect(scanned).toContain('docker/smoke.sh')
    expect(TRACKED.filter((p) => /\.(ts|js|sh|json|md)$/.test(p) && !DATA(p) && !scanned.includes(p))).toEqual([SELF])
    const findings = scanned.flatMap((path) => scanFile({ path, text: readFileSync(join(ROOT, path), 'utf8') }, options))
    expect(findings.map((f) => `${f.file}:${f.line} ${f.what}`)).toEqual([])
    expect(escapingSymlinks(ROOT, TRACKED)).toEqual([])
  })
})

describe('the scanner', () => {
  // A fake checkout `<tmp>/checkouts/repo` with a directory of fixtures beside it, as on the
  // machine where the references below once passed.
  const base = mkdtempSync(join(tmpdir(), 'ss-self-contained-'))
  afterAll(() => rmSync(base, { recursive: true, force: true }))
  const work = join(base, 'checkouts')
  const root = join(work, 'repo')
  const SIBLING = 'beside'
  /** `n` steps up, as a path prefix and as `join` arguments. */
  const up = (n: number): string => '../'.repeat(n)
  const upArgs = (n: number): string => Array.from({ length: n }, () => "'..'").join(', ')
  mkdirSync(join(work, SIBLING, 'fixtures'), { recursive: true })
  writeFileSync(join(work, SIBLING, 'fixtures', 'a.jsonl'), '{}\n')
  mkdirSync(join(root, 'test', 'cli'), { recursive: true })
  mkdirSync(join(root, 'test', 'fixtures'), { recursive: true })
  writeFileSync(join(root, 'test', 'fixtures', 'tracked.jsonl'), '{}\n')
  writeFileSync(join(root, 'test', 'fixtures', 'ignored.jsonl'), '{}\n')
  const options: ScanOptions = { root, tracked: new Set(['test/fixtures/tracked.jsonl', 'test/cli/helpers.ts']), systemRoots: ['/proc', '/etc'] }
  const scan = (text: string, path = 'test/cli/helpers.ts'): Finding[] => scanFile({ path, text }, options)

  it('finds a fixture directory reached by climbing out of the repository', () => {
    const [finding, ...rest] = scan(`const FIXTURES = join(import.meta.dirname, ${upArgs(3)}, '${SIBLING}', 'fixtures')`)
    expect(rest).toEqual([])
    expect(finding).toMatchObject({ file: 'test/cli/helpers.ts', line: 1, what: expect.stringContaining(`leads out of the repository (to ${join(work, SIBLING, 'fixtures')})`) })
    expect(scan(`new URL('${up(3)}${SIBLING}/fixtures/a.jsonl', import.meta.url)`)).toHaveLength(1)
    expect(scan(`ROOT="$(cd "$(dirname "$0")/${up(2).slice(0, -1)}" && pwd)"`, 'docker/smoke.sh')).toHaveLength(1)
  })

  it('finds an absolute path beside the checkout, and a ../ path from the working directory', () => {
    expect(scan(`export const FIXTURES = '${join(work, SIBLING, 'fixtures')}'`)).toMatchObject([
      { line: 1, what: expect.stringContaining(`${join(work, SIBLING, 'fixtures')} exists beside this checkout`) },
    ])
    expect(scan(`const FIXTURE = '${join(work, SIBLING, 'fixtures', 'a.jsonl')}'`)).toHaveLength(1)
    expect(scan(`readFileSync('${up(1)}${SIBLING}/fixtures/a.jsonl')`, 'test/x.test.ts')).toHaveLength(1)
  })

  it('finds a referenced file that exists but is not tracked', () => {
    expect(scan("join(import.meta.dirname, '..', 'fixtures', 'ignored.jsonl')")).toMatchObject([
      { what: expect.stringContaining('names test/fixtures/ignored.jsonl, which exists here but is not tracked') },
    ])
    expect(scan("join(import.meta.dirname, '..', 'fixtures', 'tracked.jsonl')")).toEqual([])
    expect(scan("join(import.meta.dirname, '..', 'fixtures')")).toEqual([])
  })

  it('finds a file URL\'s pathname used as a path', () => {
    expect(scan("const ROOT = new URL('..', import.meta.url).pathname")).toMatchObject([{ what: expect.stringContaining('fileURLToPath') }])
  })

  // The checkout's own parents exist wherever it is cloned (`<tmp>/checkouts` here), so a `../`
  // path that finds nothing nearer than one of them names nothing outside the repository.
  it('leaves session cwds, URL paths, system paths and paths inside the repository alone', () => {
    expect(scan([
      "await client.createSession({ cwd: '/srv/demo-project' })",
      "const res = await fetch(base + '/v1/sessions')",
      'readFileSync(`/proc/${pid}/status`)', // eslint-disable-line no-template-curly-in-string -- a line of code as text
      "const watched = ['/', '/etc']",
      "const MAIN = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts')",
      `const inside = '${join(root, 'test')}'`,
      "import { startApp } from '../helpers/app.js'",
      "const parent = resolve('..')",
    ].join('\n'))).toEqual([])
  })

  it('finds a tracked symlink out of the repository', () => {
    symlinkSync(join(work, SIBLING, 'fixtures'), join(root, 'test', 'linked'))
    expect(escapingSymlinks(root, ['test/linked', 'test/fixtures/tracked.jsonl'])).toMatchObject([{ file: 'test/linked' }])
  })
})
