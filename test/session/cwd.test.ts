import { describe, expect, it } from 'vitest'
import {
  assertValidCwd, assertValidTerminalId, encodeCwd, fileTimestamp, sessionFileName,
} from '../../src/session/cwd.js'

const TABLE: Array<[string, string]> = [
  ['/work/pi', '--work-pi--'],
  ['/', '----'],
  ['/home/alice/a:b/c', '--home-alice-a-b-c--'],
  ['/srv/my project/x', '--srv-my project-x--'],
  ['C:\\Users\\bob\\repo', '--C--Users-bob-repo--'],
  ['\\\\server\\share\\x', '---server-share-x--'],
  ['//double/slash', '---double-slash--'],
  ['relative/dir', '--relative-dir--'],
  ['/tmp/foo/bar/', '--tmp-foo-bar---'],
  ['/a-b/c', '--a-b-c--'],
  ['/a/b-c', '--a-b-c--'],
]

function codeOf (fn: () => void): unknown {
  try {
    fn()
  } catch (err) {
    return (err as { code?: unknown }).code
  }
  return undefined
}

describe('encodeCwd', () => {
  it('§12.1 encodeCwd returns every directory name of the table', () => {
    for (const [cwd, dir] of TABLE) expect(encodeCwd(cwd), cwd).toBe(dir)
  })
})

describe('session file name', () => {
  it('§12.2 fileTs is the header timestamp with ":" and "." turned into "-"', () => {
    expect(fileTimestamp('2026-03-14T15:04:07.123Z')).toBe('2026-03-14T15-04-07-123Z')
    expect(sessionFileName('2026-03-14T15:04:07.123Z', '0195f3a2-7c1e-7d3a-9b2c-4e5f6a7b8c9d'))
      .toBe('2026-03-14T15-04-07-123Z_0195f3a2-7c1e-7d3a-9b2c-4e5f6a7b8c9d.jsonl')
  })
})

describe('assertValidCwd', () => {
  it('§12.7 an empty cwd fails with INVALID_ARGUMENT naming the argument', () => {
    expect(codeOf(() => assertValidCwd(''))).toBe('SS_INVALID_ARGUMENT')
    expect(() => assertValidCwd('')).toThrow(/cwd/)
    expect(() => assertValidCwd('', 'newCwd')).toThrow(/newCwd/)
    expect(codeOf(() => assertValidCwd(undefined))).toBe('SS_INVALID_ARGUMENT')
    expect(codeOf(() => assertValidCwd(42))).toBe('SS_INVALID_ARGUMENT')
  })

  it('§12.7 a cwd containing "\\n" (or CR or NUL) fails with INVALID_ARGUMENT', () => {
    for (const cwd of ['/a\nb', '/a\rb', '/a\0b', '\n']) {
      expect(codeOf(() => assertValidCwd(cwd)), JSON.stringify(cwd)).toBe('SS_INVALID_ARGUMENT')
    }
  })

  it('§12.7 a cwd whose directory name exceeds 255 bytes fails with INVALID_ARGUMENT', () => {
    // "--" + 251 + "--" = 255 bytes is the longest accepted name.
    expect(() => assertValidCwd('/' + 'a'.repeat(251))).not.toThrow()
    expect(codeOf(() => assertValidCwd('/' + 'a'.repeat(252)))).toBe('SS_INVALID_ARGUMENT')
    // Bytes, not code units: 126 × "é" is 252 bytes.
    expect(codeOf(() => assertValidCwd('/' + 'é'.repeat(126)))).toBe('SS_INVALID_ARGUMENT')
    expect(() => assertValidCwd('/' + 'é'.repeat(125))).not.toThrow()
  })

  it('§2.2 ordinary cwds are accepted verbatim', () => {
    for (const [cwd] of TABLE) expect(() => assertValidCwd(cwd)).not.toThrow()
  })
})

describe('assertValidTerminalId', () => {
  it('§12.7 terminal id ../x fails with INVALID_ARGUMENT; pts-3 is accepted', () => {
    expect(codeOf(() => assertValidTerminalId('../x'))).toBe('SS_INVALID_ARGUMENT')
    expect(() => assertValidTerminalId('pts-3')).not.toThrow()
  })

  it('§2.4 rejects ".", "..", empty, over-long and out-of-alphabet ids', () => {
    for (const id of ['.', '..', '', 'a'.repeat(129), 'a/b', 'a b', 'ä', undefined, 3]) {
      expect(codeOf(() => assertValidTerminalId(id)), String(id)).toBe('SS_INVALID_ARGUMENT')
    }
    for (const id of ['...', 'a'.repeat(128), 'A.b_c-9', '.hidden']) {
      expect(() => assertValidTerminalId(id), id).not.toThrow()
    }
  })
})
