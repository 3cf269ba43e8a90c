import { describe, expect, it } from 'vitest'
import { buildSessionContext } from '../../src/session/context.js'
import { assertSupportedVersion, fileVersion, migrateSessionEntries } from '../../src/session/migrate.js'
import { isEntry } from '../../src/session/tree.js'
import type { FileRecord } from '../../src/session/types.js'

const HEX8 = /^[0-9a-f]{8}$/

function v1 (...rest: FileRecord[]): FileRecord[] {
  return [
    { type: 'session', id: 'old', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/w' },
    ...rest,
  ]
}
const u = (text: string): FileRecord => ({ type: 'message', timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'user', content: text } })
const a = (text: string): FileRecord => ({
  type: 'message',
  timestamp: '2025-01-01T00:00:02.000Z',
  message: { role: 'assistant', provider: 'p', model: 'm', content: [{ type: 'text', text }] },
})
/** A v1 compaction; with an argument it carries `firstKeptEntryIndex` (even `undefined`). */
const c = (...index: unknown[]): FileRecord => {
  const r: FileRecord = { type: 'compaction', timestamp: '2025-01-01T00:00:03.000Z', summary: 'S', tokensBefore: 5 }
  if (index.length > 0) r.firstKeptEntryIndex = index[0]
  return r
}
function codeOf (fn: () => unknown): unknown {
  try { fn() } catch (err) { return (err as { code?: unknown }).code }
  return undefined
}

describe('v1 → v2 → v3', () => {
  it('§12.20 a v1 file gets 8-hex ids chained in file order and version 3', () => {
    const records = v1(u('one'), a('two'), u('three'))
    expect(migrateSessionEntries(records)).toBe(true)
    expect(records[0]!.version).toBe(3)
    const ids = records.slice(1).map((r) => r.id as string)
    for (const id of ids) expect(id).toMatch(HEX8)
    expect(new Set(ids).size).toBe(3)
    expect(records[1]!.parentId).toBeNull()
    expect(records[2]!.parentId).toBe(ids[0])
    expect(records[3]!.parentId).toBe(ids[1])
  })

  it('§4.2 replaces existing ids and parents of v1 records', () => {
    const records = v1({ ...u('x'), id: 'keep-me', parentId: 'zzz' }, { ...a('y'), id: 'keep-me' })
    migrateSessionEntries(records)
    expect(records[1]!.id).toMatch(HEX8)
    expect(records[1]!.parentId).toBeNull()
    expect(records[2]!.id).not.toBe(records[1]!.id)
    expect(records[2]!.parentId).toBe(records[1]!.id)
  })

  it('§12.21 a v1 compaction with firstKeptEntryIndex 2 gets the id of the second record after the header', () => {
    const records = v1(u('one'), a('two'), u('three'), c(2), u('four'))
    migrateSessionEntries(records)
    expect(records[4]!.firstKeptEntryId).toBe(records[2]!.id)
    expect('firstKeptEntryIndex' in records[4]!).toBe(false)
  })

  it('§12.22 firstKeptEntryIndex 0, -1, 1.5, "2", null, past the end or after the compaction leaves no firstKeptEntryId', () => {
    for (const value of [0, -1, 1.5, '2', null, true, 99, 5, undefined]) {
      // The compaction sits at index 4; index 5 exists but comes after it.
      const records = v1(u('one'), a('two'), u('three'), c(value), u('five'))
      migrateSessionEntries(records)
      const comp = records[4]!
      expect('firstKeptEntryId' in comp, String(value)).toBe(false)
      expect('firstKeptEntryIndex' in comp, String(value)).toBe(false)
    }
  })

  it('§4.2 an invalid index also drops a stray firstKeptEntryId; no index key leaves the compaction alone', () => {
    const withIndex = v1(u('one'), { ...c(0), firstKeptEntryId: 'stray' })
    migrateSessionEntries(withIndex)
    expect('firstKeptEntryId' in withIndex[2]!).toBe(false)
    const noIndex = v1(u('one'), { ...c(), firstKeptEntryId: 'kept' })
    migrateSessionEntries(noIndex)
    expect(noIndex[2]!.firstKeptEntryId).toBe('kept')
  })

  it('§12.23 firstKeptEntryIndex equal to the compaction index stores its own id; context is summary + later entries', () => {
    const records = v1(u('one'), a('two'), c(3), u('four'), a('five'))
    migrateSessionEntries(records)
    const comp = records[3]!
    expect(comp.firstKeptEntryId).toBe(comp.id)
    const entries = records.filter(isEntry)
    const ctx = buildSessionContext(entries)
    expect(ctx.messages.map((m) => m.role)).toEqual(['compactionSummary', 'user', 'assistant'])
    expect(ctx.messages[1]).toBe(records[4]!.message)
  })

  it('§12.24 a v2 file keeps its ids, turns hookMessage into custom and becomes version 3', () => {
    const hook = { role: 'hookMessage', customType: 'h', content: 'x', display: true, timestamp: 7 }
    const records: FileRecord[] = [
      { type: 'session', version: 2, id: 's', timestamp: 't', cwd: '/w' },
      { type: 'message', id: 'abc12345', parentId: null, timestamp: 't', message: { ...hook } },
      { type: 'message', id: 'def67890', parentId: 'abc12345', timestamp: 't', message: { role: 'user', content: 'u' } },
    ]
    expect(migrateSessionEntries(records)).toBe(true)
    expect(records[0]!.version).toBe(3)
    expect(records.slice(1).map((r) => [r.id, r.parentId])).toEqual([['abc12345', null], ['def67890', 'abc12345']])
    expect(records[1]!.message).toEqual({ ...hook, role: 'custom' })
    expect(records[2]!.message).toEqual({ role: 'user', content: 'u' })
  })

  it('§4.3 a v3 file is not migrated', () => {
    const records: FileRecord[] = [
      { type: 'session', version: 3, id: 's', timestamp: 't', cwd: '/w' },
      { type: 'message', id: '1', parentId: null, timestamp: 't', message: { role: 'hookMessage' } },
    ]
    const before = structuredClone(records)
    expect(migrateSessionEntries(records)).toBe(false)
    expect(records).toEqual(before)
  })

  it('§12.25 legacy header keys provider, modelId, thinkingLevel, branchedFrom survive the migration', () => {
    const legacy = { provider: 'anthropic', modelId: 'claude', thinkingLevel: 'off', branchedFrom: '/x.jsonl' }
    const records = v1(u('one'))
    Object.assign(records[0]!, legacy)
    migrateSessionEntries(records)
    expect(records[0]).toMatchObject({ ...legacy, type: 'session', id: 'old', version: 3 })
  })

  it('§5.4 v2→v3 leaves opaque records alone; v1→v2 skips records of type "session"', () => {
    const opaque = { type: 'message', parentId: null, message: { role: 'hookMessage' } }
    const v2: FileRecord[] = [{ type: 'session', version: 2, id: 's' }, structuredClone(opaque)]
    migrateSessionEntries(v2)
    expect(v2[1]).toEqual(opaque)

    const records = v1(u('one'), { type: 'session', id: 'inner' }, { note: 'no type' }, a('two'))
    migrateSessionEntries(records)
    expect(records[2]).toEqual({ type: 'session', id: 'inner' })
    // §4.2 numbers every non-"session" record, even one without a type (it stays opaque, §5.4).
    expect(records[3]!.id).toMatch(HEX8)
    expect(records[3]!.parentId).toBe(records[1]!.id)
    expect(records[4]!.parentId).toBe(records[3]!.id)
    expect(isEntry(records[3]!)).toBe(false)
  })

  it('§4.2 an index that points at a skipped "session" record selects nothing', () => {
    const records = v1(u('one'), { type: 'session', id: 'inner' }, c(2))
    migrateSessionEntries(records)
    expect('firstKeptEntryId' in records[3]!).toBe(false)
  })

  it('returns false for records without a session header', () => {
    expect(migrateSessionEntries([])).toBe(false)
    expect(migrateSessionEntries([{ type: 'message' }])).toBe(false)
  })
})

describe('file version', () => {
  it('§4.1 absent or null means version 1', () => {
    expect(fileVersion({ type: 'session' })).toBe(1)
    expect(fileVersion({ type: 'session', version: null })).toBe(1)
    expect(assertSupportedVersion('/p', { type: 'session', version: null })).toBe(1)
    expect(assertSupportedVersion('/p', { type: 'session', version: 3 })).toBe(3)
  })

  it('§12.17 version 4 fails with SESSION_VERSION_TOO_NEW, "3" and 2.5 with SESSION_VERSION_INVALID', () => {
    expect(codeOf(() => assertSupportedVersion('/d/s.jsonl', { version: 4 }))).toBe('SS_SESSION_VERSION_TOO_NEW')
    expect(() => assertSupportedVersion('/d/s.jsonl', { version: 4 })).toThrow(/\/d\/s\.jsonl.*4/)
    for (const version of ['3', 2.5, 0, -1, true, {}]) {
      expect(codeOf(() => assertSupportedVersion('/d/s.jsonl', { version })), String(version))
        .toBe('SS_SESSION_VERSION_INVALID')
    }
    expect(() => assertSupportedVersion('/d/s.jsonl', { version: '3' })).toThrow(/\/d\/s\.jsonl.*"3"/)
  })

  it('§4.1 migrateSessionEntries refuses unsupported versions without touching the records', () => {
    const records: FileRecord[] = [{ type: 'session', version: 4, id: 's' }, u('x')]
    const before = structuredClone(records)
    expect(codeOf(() => migrateSessionEntries(records, '/d/s.jsonl'))).toBe('SS_SESSION_VERSION_TOO_NEW')
    expect(codeOf(() => migrateSessionEntries([{ type: 'session', version: 2.5 }]))).toBe('SS_SESSION_VERSION_INVALID')
    expect(records).toEqual(before)
  })
})
