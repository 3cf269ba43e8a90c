/**
 * SPEC.md §11.1 (`list`, `listAll`) — acceptance scenarios 85–87, plus the listing extras of
 * API.md (`entryCount`, `includeEmpty`) and the "errors never escape" rule.
 */
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  findMostRecentSession, listAllSessions, listSessions,
} from '../../src/session/discovery.js'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import { MemorySessionStorage } from '../../src/storage/memory-session-storage.js'
import { header, msg, override, setMtime, tempDataDir, writeSession } from './helpers.js'

const T0 = Date.UTC(2026, 2, 14, 12, 0, 0)

let data: { dir: string, cleanup: () => void }
let storage: FileSessionStorage
let sessions: string
let dir: string

beforeEach(() => {
  data = tempDataDir()
  storage = new FileSessionStorage()
  sessions = join(data.dir, 'sessions')
  dir = join(sessions, '--work-pi--')
})
afterEach(() => data.cleanup())

describe('list (§11.1)', () => {
  it('§12.85 list hides header-only sessions; findMostRecentSession still returns them', async () => {
    const full = writeSession(storage, join(dir, 'a.jsonl'), [header(), msg('1', 'user', 'hi')])
    const empty = writeSession(storage, join(dir, 'b.jsonl'), [header()])
    setMtime(full, T0)
    setMtime(empty, T0 + 1000)

    expect((await listSessions(storage, dir)).map((s) => s.path)).toEqual([full])
    expect(await findMostRecentSession(storage, dir)).toBe(empty)
    // API.md includeEmpty=true lists it too, newest first.
    expect((await listSessions(storage, dir, { includeEmpty: true })).map((s) => s.path)).toEqual([empty, full])
  })

  it('includeEmpty never lists a file without a valid header', async () => {
    writeSession(storage, join(dir, 'bad.jsonl'), [{ type: 'message', id: 'x' }, msg('1', 'user', 'hi')])
    writeSession(storage, join(dir, 'noid.jsonl'), [{ type: 'session', id: '' }, msg('1', 'user', 'hi')])
    storage.writeTextSync(join(dir, 'garbage.jsonl'), 'not json\n')
    const ok = writeSession(storage, join(dir, 'ok.jsonl'), [header()])
    expect((await listSessions(storage, dir, { includeEmpty: true })).map((s) => s.path)).toEqual([ok])
  })

  it('§12.86 messageCount counts every message record; firstMessage falls back; title falls back to the last compaction shortSummary', async () => {
    const h = header({ id: 'main', cwd: '/srv/app', parentSession: 'parent-id', timestamp: '2026-03-01T10:00:00.000Z' })
    const path = writeSession(storage, join(dir, 'main.jsonl'), [
      h,
      msg('1', 'assistant', [{ type: 'text', text: 'hello' }, { type: 'toolCall', id: 't' }, { type: 'text', text: 'there' }]),
      msg('2', 'user', [{ type: 'image', data: 'AAAA' }], '1'), // user without text: not the firstMessage
      msg('3', 'toolResult', 'tool output', '2'),
      msg('4', 'user', 'first real question', '3'),
      msg('5', 'user', 'side branch', '1'), // another branch still counts
      { type: 'message', timestamp: 'x', message: { role: 'user', content: 'v1 no id' } }, // counted, not an entry
      { type: 'compaction', id: 'c1', parentId: '4', timestamp: 'x', summary: 's', shortSummary: 'Old recap', tokensBefore: 1 },
      { type: 'compaction', id: 'c2', parentId: 'c1', timestamp: 'x', summary: 's', shortSummary: 'New recap', tokensBefore: 1 },
      { type: 'custom', id: 'e', parentId: 'c2', timestamp: 'x', customType: 'k' },
    ])
    setMtime(path, T0)

    const [info, ...rest] = await listSessions(storage, dir)
    expect(rest).toEqual([])
    expect(info).toEqual({
      path,
      id: 'main',
      cwd: '/srv/app',
      title: 'New recap',
      parentSessionPath: 'parent-id',
      created: new Date('2026-03-01T10:00:00.000Z'),
      modified: new Date(T0),
      messageCount: 6,
      firstMessage: 'first real question',
      allMessagesText: 'hello there first real question side branch v1 no id',
      entryCount: 8,
      header: h,
    })
  })

  it('counts the entries of a file older than version 2 as the migration makes them (§4.2)', async () => {
    const records = [
      { type: 'session', id: 'old', timestamp: '2026-03-01T10:00:00.000Z', cwd: '/srv/app' }, // no version: 1
      { type: 'message', timestamp: 'x', message: { role: 'user', content: 'q' } },
      { type: 'message', timestamp: 'x', message: { role: 'assistant', content: [{ type: 'text', text: 'a' }] } },
      { type: 'compaction', timestamp: 'x', summary: 's', firstKeptEntryIndex: 1, tokensBefore: 1 },
      { timestamp: 'x', note: 'no type: given an id, still not an entry' },
    ]
    writeSession(storage, join(dir, 'v1.jsonl'), records)
    writeSession(storage, join(dir, 'v2.jsonl'), [{ ...records[0], id: 'two', version: 2 }, ...records.slice(1)])
    const counts = Object.fromEntries((await listSessions(storage, dir)).map((s) => [s.id, s.entryCount]))
    expect(counts).toEqual({ old: 3, two: 0 })
  })

  it('§12.86 "(no messages)" without user text, header title beats compactions, non-string cwd is ""', async () => {
    writeSession(storage, join(dir, 'a.jsonl'), [
      header({ title: 'Header title', cwd: 42 }),
      msg('1', 'assistant', 'only the assistant spoke'),
      msg('2', 'user', '', '1'),
      { type: 'compaction', id: 'c', parentId: '2', timestamp: 'x', summary: 's', shortSummary: 'recap', tokensBefore: 1 },
    ])
    const [info] = await listSessions(storage, dir)
    expect(info?.firstMessage).toBe('(no messages)')
    expect(info?.title).toBe('Header title')
    expect(info?.cwd).toBe('')
    expect(info?.allMessagesText).toBe('only the assistant spoke')
    expect(info).not.toHaveProperty('parentSessionPath')
  })

  it('§12.86 no title and no compaction shortSummary leaves title absent', async () => {
    writeSession(storage, join(dir, 'a.jsonl'), [
      header(),
      { type: 'compaction', id: 'c1', parentId: null, timestamp: 'x', summary: 's', shortSummary: 'early', tokensBefore: 1 },
      msg('1', 'user', 'q', 'c1'),
      { type: 'compaction', id: 'c2', parentId: '1', timestamp: 'x', summary: 's', tokensBefore: 1 },
    ])
    const listed = await listSessions(storage, dir)
    expect(listed.map((i) => i.path)).toEqual([join(dir, 'a.jsonl')])
    expect(listed[0]).not.toHaveProperty('title')
  })

  it('§12.87 list sorts by mtime, newest first', async () => {
    const paths = ['a', 'b', 'c'].map((n) => writeSession(storage, join(dir, `${n}.jsonl`), [header(), msg('1', 'user', n)]))
    setMtime(paths[0]!, T0 + 2000)
    setMtime(paths[1]!, T0)
    setMtime(paths[2]!, T0 + 1000)
    expect((await listSessions(storage, dir)).map((s) => s.firstMessage)).toEqual(['a', 'c', 'b'])
  })

  it('§12.87 listAll includes sessions of every cwd directory (any depth), newest first', async () => {
    const a = writeSession(storage, join(sessions, '--work-pi--', 'a.jsonl'), [header(), msg('1', 'user', 'a')])
    const b = writeSession(storage, join(sessions, '--srv-app--', 'b.jsonl'), [header(), msg('1', 'user', 'b')])
    const c = writeSession(storage, join(sessions, '--srv-app--', 'nested', 'c.jsonl'), [header(), msg('1', 'user', 'c')])
    const d = writeSession(storage, join(sessions, 'd.jsonl'), [header(), msg('1', 'user', 'd')])
    writeSession(storage, join(sessions, '--srv-app--', 'e.jsonl.bak'), [header(), msg('1', 'user', 'e')])
    writeSession(storage, join(data.dir, 'outside.jsonl'), [header(), msg('1', 'user', 'outside')])
    setMtime(a, T0 + 1000)
    setMtime(b, T0 + 3000)
    setMtime(c, T0)
    setMtime(d, T0 + 2000)
    const all = await listAllSessions(storage, sessions)
    expect(all.map((s) => s.path)).toEqual([b, d, a, c])
  })

  it('§12.87 listAll over the memory storage walks its implicit directories', async () => {
    const mem = new MemorySessionStorage()
    const root = '/data/sessions'
    writeSession(mem, `${root}/--a--/1.jsonl`, [header(), msg('1', 'user', 'first')])
    writeSession(mem, `${root}/--b--/2.jsonl`, [header(), msg('1', 'user', 'second')])
    writeSession(mem, `${root}/--b--/deep/3.jsonl`, [header(), msg('1', 'user', 'third')])
    writeSession(mem, '/data/other/4.jsonl', [header(), msg('1', 'user', 'elsewhere')])
    const all = await listAllSessions(mem, root)
    // The memory storage's mtimes strictly increase, so the last write is the newest.
    expect(all.map((s) => s.firstMessage)).toEqual(['third', 'second', 'first'])
  })
})

describe('errors never escape (§11.1)', () => {
  it('a missing directory yields []', async () => {
    expect(await listSessions(storage, join(data.dir, 'nope'))).toEqual([])
    expect(await listAllSessions(storage, join(data.dir, 'nope'))).toEqual([])
  })

  it('a directory that cannot be listed yields [] and an unreadable file is skipped', async () => {
    const ok = writeSession(storage, join(dir, 'ok.jsonl'), [header(), msg('1', 'user', 'fine')])
    const broken = writeSession(storage, join(dir, 'broken.jsonl'), [header(), msg('1', 'user', 'nope')])
    const failing = override(storage, {
      readText: async (p: string) => { if (p === broken) throw eacces(); return await storage.readText(p) },
    })
    expect((await listSessions(failing, dir)).map((s) => s.path)).toEqual([ok])
    const unlistable = override(storage, { listFilesSync: () => { throw eacces() } })
    await expect(listSessions(unlistable, dir)).resolves.toEqual([])
  })
})

const eacces = (): Error => Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })
