import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isInside, resolveInside } from '../../src/storage/paths.js'

const ROOT = '/data'

function codeOf (fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    return (err as { code?: unknown }).code
  }
  return 'no error'
}

describe('resolveInside', () => {
  it('resolves relative candidates against root', () => {
    expect(resolveInside(ROOT, 'sessions/--x--/a.jsonl')).toBe('/data/sessions/--x--/a.jsonl')
    expect(resolveInside(ROOT, 'a/../b')).toBe('/data/b')
    expect(resolveInside(ROOT, '..hidden')).toBe('/data/..hidden')
  })

  it('accepts absolute candidates inside root, and root itself', () => {
    expect(resolveInside(ROOT, '/data/sessions/x.jsonl')).toBe('/data/sessions/x.jsonl')
    expect(resolveInside(ROOT, '/data/')).toBe('/data')
    expect(resolveInside(ROOT, '.')).toBe('/data')
  })

  it('resolves a relative root against the working directory', () => {
    expect(resolveInside('./data', 'x')).toBe(join(resolve('data'), 'x'))
  })

  it.each([
    ['..'],
    ['../etc/passwd'],
    ['sessions/../../etc/passwd'],
    ['/etc/passwd'],
    ['/data2/x'],
    ['/data-old'],
    ['/dat'],
    ['/'],
  ])('rejects %j with PATH_OUTSIDE_DATA_DIR', (candidate) => {
    expect(codeOf(() => resolveInside(ROOT, candidate))).toBe('SS_PATH_OUTSIDE_DATA_DIR')
  })

  it('rejects NUL bytes with PATH_OUTSIDE_DATA_DIR, without the raw NUL in the message', () => {
    let caught: unknown
    try {
      resolveInside(ROOT, 'x\0/../../etc')
    } catch (err) {
      caught = err
    }
    expect(caught).toMatchObject({ code: 'SS_PATH_OUTSIDE_DATA_DIR', statusCode: 400 })
    expect((caught as Error).message.includes('\0')).toBe(false)
  })
})

describe('isInside', () => {
  it('tells inside from outside lexically', () => {
    expect(isInside('/data', '/data')).toBe(true)
    expect(isInside('/data', '/data/a/b')).toBe(true)
    expect(isInside('/data/', '/data/a')).toBe(true)
    expect(isInside('/data', '/data2')).toBe(false)
    expect(isInside('/data', '/data/../data2/x')).toBe(false)
    expect(isInside('/data', '/')).toBe(false)
    expect(isInside('/data', '/data/\0')).toBe(false)
  })
})
