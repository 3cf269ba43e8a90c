import crypto from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createEntryId, createSessionId, nowIso } from '../../src/session/ids.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A random source that returns `hex` for the first `times` calls, then real random bytes. */
function repeating (hex: string, times: number) {
  const calls: number[] = []
  const source = (size: number): Buffer => {
    calls.push(size)
    return calls.length <= times ? Buffer.from(hex, 'hex') : crypto.randomBytes(size)
  }
  return { source, calls }
}

describe('createEntryId', () => {
  it('§3.2 1,000 ids are distinct and match ^[0-9a-f]{8}$', () => {
    const taken = new Set<string>()
    for (let i = 0; i < 1000; i++) {
      const id = createEntryId((c) => taken.has(c))
      expect(id).toMatch(/^[0-9a-f]{8}$/)
      taken.add(id)
    }
    expect(taken.size).toBe(1000)
  })

  it('§3.2 a source repeating an existing id 100 times yields a unique 16-hex id', () => {
    const taken = new Set(['deadbeef'])
    const { source, calls } = repeating('deadbeef', 100)
    const id = createEntryId((c) => taken.has(c), source)
    expect(id).toMatch(/^[0-9a-f]{16}$/)
    expect(taken.has(id)).toBe(false)
    expect(calls.slice(0, 100).every((n) => n === 4)).toBe(true)
    expect(calls[100]).toBe(8)
  })

  it('§3.2 after 99 collisions it still draws 8 hex', () => {
    const taken = new Set(['deadbeef'])
    const { source } = repeating('deadbeef', 99)
    expect(createEntryId((c) => taken.has(c), source)).toMatch(/^[0-9a-f]{8}$/)
  })

  it('§3.2 the 16-hex candidates are still checked for uniqueness', () => {
    const long = '0123456789abcdef'
    const taken = new Set(['deadbeef', long])
    let n = 0
    const source = (size: number): Buffer => {
      n++
      if (n <= 100) return Buffer.from('deadbeef', 'hex')
      if (n === 101) return Buffer.from(long, 'hex')
      return crypto.randomBytes(size)
    }
    const id = createEntryId((c) => taken.has(c), source)
    expect(id).toMatch(/^[0-9a-f]{16}$/)
    expect(id).not.toBe(long)
  })

  it('throws instead of looping forever on a source that always collides', () => {
    expect(() => createEntryId(() => true, (size) => Buffer.alloc(size))).toThrow(/random source/)
  })
})

describe('createSessionId', () => {
  it('§12.4 session ids match the UUIDv7 pattern of §3.2', () => {
    for (let i = 0; i < 1000; i++) expect(createSessionId()).toMatch(UUID_V7)
  })

  it('§3.2 encodes the millisecond timestamp in the first 48 bits', () => {
    // Later than any id minted so far: ids never go back in time within a process.
    const ms = Date.UTC(2036, 2, 14, 15, 4, 7, 123)
    const id = createSessionId(() => ms)
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(ms)
  })

  it('§3.2 ids minted within one millisecond are strictly increasing', () => {
    const ms = Date.UTC(2040, 0, 1)
    const ids = Array.from({ length: 5000 }, () => createSessionId(() => ms))
    for (const id of ids) expect(id).toMatch(UUID_V7)
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true)
  })

  it('§3.2 ids stay increasing when the clock steps back', () => {
    const a = createSessionId(() => Date.UTC(2041, 0, 1))
    const b = createSessionId(() => Date.UTC(2020, 0, 1))
    expect(b).toMatch(UUID_V7)
    expect(b > a).toBe(true)
  })
})

describe('nowIso', () => {
  it('§12.6 timestamps match ^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$', () => {
    const before = Date.now()
    const iso = nowIso()
    expect(iso).toMatch(ISO_MS)
    expect(Date.parse(iso)).toBeGreaterThanOrEqual(before)
  })
})
