/**
 * SPEC.md §11.2 (`getRecentSessions`, `findMostRecentSession`, display names, `timeAgo`) —
 * acceptance scenarios 88–91.
 */
import fs from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  findMostRecentSession, getRecentSessions, sanitizeName, timeAgo,
} from '../../src/session/discovery.js'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import { MemorySessionStorage } from '../../src/storage/memory-session-storage.js'
import { header, msg, setMtime, tempDataDir, writeSession } from './helpers.js'

const T0 = Date.UTC(2026, 2, 14, 12, 0, 0)
const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'pi-v1-before-compaction.jsonl')

let data: { dir: string, cleanup: () => void }
let storage: FileSessionStorage
let dir: string

beforeEach(() => {
  data = tempDataDir()
  storage = new FileSessionStorage()
  dir = join(data.dir, 'sessions', '--work-pi--')
})
afterEach(() => data.cleanup())

describe('findMostRecentSession (§11.2)', () => {
  it('§12.88 null for an empty or a missing directory', async () => {
    storage.ensureDirSync(dir)
    expect(await findMostRecentSession(storage, dir)).toBeNull()
    expect(await findMostRecentSession(storage, join(data.dir, 'missing'))).toBeNull()
  })

  it('§12.88 non-.jsonl and invalid-header files are ignored; the newest valid file wins', async () => {
    const old = writeSession(storage, join(dir, 'old.jsonl'), [header(), msg('1', 'user', 'a')])
    const valid = writeSession(storage, join(dir, 'valid.jsonl'), [header()])
    const invalid = writeSession(storage, join(dir, 'invalid.jsonl'), [{ type: 'session', id: 5 }, msg('1', 'user', 'a')])
    const garbage = join(dir, 'garbage.jsonl')
    storage.writeTextSync(garbage, '{"type":"sess\n')
    const other = writeSession(storage, join(dir, 'notes.txt'), [header()])
    const corrupt = writeSession(storage, join(dir, 'x.jsonl.corrupt-2026'), [header()])
    setMtime(old, T0)
    setMtime(valid, T0 + 1000)
    setMtime(invalid, T0 + 2000)
    setMtime(garbage, T0 + 3000)
    setMtime(other, T0 + 4000)
    setMtime(corrupt, T0 + 5000)
    expect(await findMostRecentSession(storage, dir)).toBe(valid)
    expect((await getRecentSessions(storage, dir, 10, T0)).map((r) => r.path)).toEqual([valid, old])
  })

  it('§12.88 a header longer than the 4096-byte prefix does not qualify', async () => {
    const small = writeSession(storage, join(dir, 'small.jsonl'), [header()])
    const big = writeSession(storage, join(dir, 'big.jsonl'), [header({ pad: 'x'.repeat(5000) })])
    setMtime(small, T0)
    setMtime(big, T0 + 1000)
    expect(await findMostRecentSession(storage, dir)).toBe(small)
  })
})

describe('getRecentSessions (§11.2)', () => {
  it('§12.89 returns at most 3 by default, newest first, with id, mtime and timeAgo', async () => {
    const mem = new MemorySessionStorage()
    const paths = [1, 2, 3, 4, 5].map((n) => writeSession(mem, `/d/s/${n}.jsonl`, [header({ id: `id-${n}` })]))
    const now = mem.statSync(paths[4]!).mtimeMs + 5 * 60_000
    const recent = await getRecentSessions(mem, '/d/s', undefined, now)
    expect(recent.map((r) => r.path)).toEqual([paths[4], paths[3], paths[2]])
    expect(recent[0]).toEqual({
      path: paths[4],
      id: 'id-5',
      mtime: new Date(mem.statSync(paths[4]!).mtimeMs),
      fullName: 'id-5',
      name: 'id-5',
      timeAgo: '5m ago',
    })
    expect(await getRecentSessions(mem, '/d/s', 1, now)).toHaveLength(1)
    expect(await getRecentSessions(mem, '/d/s', 10, now)).toHaveLength(5)
  })

  it('§12.89 names follow title → first user text → id → file name', async () => {
    const mem = new MemorySessionStorage()
    const names = async (): Promise<string[]> => (await getRecentSessions(mem, '/d', 10)).map((r) => r.name)
    // Written oldest first; listing is newest first.
    writeSession(mem, '/d/2026-01-01T00-00-00-000Z_file-name.jsonl', [header({ id: ' \u0001 ' }), msg('1', 'user', '\n')])
    writeSession(mem, '/d/id.jsonl', [header({ id: 'the-id' }), msg('1', 'assistant', 'not a user')])
    writeSession(mem, '/d/user.jsonl', [
      header({ id: 'u' }),
      msg('1', 'assistant', 'assistant first'),
      msg('2', 'user', [{ type: 'image', data: 'AA' }, { text: '  Fix\tthe build\r\nsecond line' }], '1'),
    ])
    writeSession(mem, '/d/title.jsonl', [header({ id: 't', title: '\tMy title\nmore' }), msg('1', 'user', 'ignored')])
    // A title that sanitizes to nothing skips the user text (only considered without a title).
    writeSession(mem, '/d/blank-title.jsonl', [header({ id: 'blank-id', title: ' \u0007 ' }), msg('1', 'user', 'hi')])
    expect(await names()).toEqual(['blank-id', 'My title', 'Fixthe build', 'the-id', '2026-01-01T00-00-00-000Z_file-name'])
  })

  it('§12.89 only user text inside the prefix counts', async () => {
    const mem = new MemorySessionStorage()
    writeSession(mem, '/d/a.jsonl', [
      header({ id: 'prefix-id' }),
      { type: 'custom', id: 'c', parentId: null, timestamp: 'x', customType: 'k', data: 'y'.repeat(4200) },
      msg('1', 'user', 'beyond the prefix', 'c'),
    ])
    expect((await getRecentSessions(mem, '/d'))[0]?.name).toBe('prefix-id')
  })

  it('§12.89 longer names are cut to 39 code units plus …', async () => {
    const mem = new MemorySessionStorage()
    const forty = 'a'.repeat(40)
    const fortyOne = 'b'.repeat(41)
    writeSession(mem, '/d/40.jsonl', [header({ title: forty })])
    writeSession(mem, '/d/41.jsonl', [header({ title: fortyOne })])
    const [long, exact] = await getRecentSessions(mem, '/d')
    expect(exact).toMatchObject({ fullName: forty, name: forty })
    expect(long).toMatchObject({ fullName: fortyOne, name: 'b'.repeat(39) + '…' })
    expect(long?.name).toHaveLength(40)
  })

  it('§12.90 names fixture pi-v1-before-compaction.jsonl from its first user message', async () => {
    const path = join(dir, '2025-12-09T00-53-29-825Z_ffae836b-9420-4060-ac13-7745215f90ff.jsonl')
    storage.ensureDirSync(dir)
    fs.copyFileSync(FIXTURE, path)
    const recent = await getRecentSessions(storage, dir)
    expect(recent).toHaveLength(1)
    expect(recent[0]?.name).toBe('alright, read @packages/coding-agent/sr…')
    expect(recent[0]?.id).toBe('ffae836b-9420-4060-ac13-7745215f90ff')
    expect(recent[0]?.path).toBe(path)
  })
})

describe('sanitizeName (§11.2)', () => {
  it('keeps the first line, deletes C0 controls and DEL, trims', () => {
    expect(sanitizeName('  a\u0000b\u001fc\u007fd  \r\nnext')).toBe('abcd')
    expect(sanitizeName('one\rtwo\nthree')).toBe('onetwo')
    expect(sanitizeName('\nsecond')).toBe('')
    expect(sanitizeName('tab\there')).toBe('tabhere')
  })
})

describe('timeAgo (§11.2)', () => {
  const now = Date.UTC(2026, 2, 14, 12, 0, 0)
  it('§12.91 just now, 5m, 3h, 2d and a UTC date for 30 s, 5 min, 3 h, 2 d and 8 d', () => {
    expect(timeAgo(now - 30_000, now)).toBe('just now')
    expect(timeAgo(now - 5 * 60_000, now)).toBe('5m ago')
    expect(timeAgo(now - 3 * 3_600_000, now)).toBe('3h ago')
    expect(timeAgo(now - 2 * 86_400_000, now)).toBe('2d ago')
    expect(timeAgo(now - 8 * 86_400_000, now)).toBe('2026-03-06')
  })

  it('§12.91 rounds whole units down at the boundaries', () => {
    expect(timeAgo(now - 59_999, now)).toBe('just now')
    expect(timeAgo(now - 60_000, now)).toBe('1m ago')
    expect(timeAgo(now - 3_599_999, now)).toBe('59m ago')
    expect(timeAgo(now - 86_399_999, now)).toBe('23h ago')
    expect(timeAgo(now - (7 * 86_400_000 - 1), now)).toBe('6d ago')
    expect(timeAgo(now - 7 * 86_400_000, now)).toBe('2026-03-07')
    expect(timeAgo(now + 10_000, now)).toBe('just now')
  })

  it('§12.91 the date is the UTC date, whatever the local time zone', () => {
    const saved = process.env.TZ
    process.env.TZ = 'Asia/Tokyo' // UTC+9: 23:30 UTC is already the next local day
    try {
      expect(new Date(Date.UTC(2026, 0, 1, 23, 30)).getDate()).toBe(2) // the zone took effect
      expect(timeAgo(Date.UTC(2026, 0, 1, 23, 30), now)).toBe('2026-01-01')
    } finally {
      if (saved === undefined) delete process.env.TZ
      else process.env.TZ = saved
    }
  })
})
