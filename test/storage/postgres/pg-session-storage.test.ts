import { join } from 'node:path'
import pg from 'pg'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { PgSessionStorage } from '../../../src/storage/postgres/pg-session-storage.js'
import { TEXT_PAGE_ROWS } from '../../../src/storage/postgres/session-text.js'
import { pgAvailable, useMigratedDatabase } from '../../helpers/pg.js'
import { storageContract } from '../contract.js'

/** Every test's files live under a root of its own below one DATA_DIR, in one database. */
const DATA_DIR = '/pg-session-storage'

describe.runIf(pgAvailable)('PgSessionStorage', () => {
  const database = useMigratedDatabase(4)
  let fixtures = 0

  storageContract('PgSessionStorage', async () => ({
    storage: await PgSessionStorage.open(database.pool, { dataDir: DATA_DIR }),
    root: `${DATA_DIR}/t${++fixtures}`,
    cleanup: async () => {},
  }))
})

const header = (id: string): string => JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/w' })
const entry = (id: string, text = id): string => JSON.stringify({ type: 'message', id, parentId: null, message: { role: 'user', content: text } })

describe.runIf(pgAvailable)('PgSessionStorage (PostgreSQL only)', () => {
  const database = useMigratedDatabase(4)
  let roots = 0
  let root: string
  let s: PgSessionStorage
  beforeEach(async () => {
    root = `/pg-data-${++roots}`
    s = await PgSessionStorage.open(database.pool, { dataDir: root })
  })

  const rows = async (sql: string, values: unknown[] = []): Promise<Array<Record<string, unknown>>> => (await database.pool.query(sql, values)).rows

  it('keeps a session file as its session row and one row per entry line, each line exact', async () => {
    const p = join(root, 'tenants', 'acme', 'sessions', '--w--', 'a.jsonl')
    const w = s.openWriter(p, { flags: 'a' })
    const lines = `${header(`s${roots}`)}\n${entry('e1', 'héllo')}\n`
    await w.writeLine(lines)
    await w.writeLine(`${entry('e2')}\n${entry('e3')}\n`)
    await w.fsync()
    await w.close()
    expect(await rows('SELECT tenant, id, path, entry_count FROM ss_sessions WHERE path = $1', ['tenants/acme/sessions/--w--/a.jsonl']))
      .toEqual([{ tenant: 'acme', id: `s${roots}`, path: 'tenants/acme/sessions/--w--/a.jsonl', entry_count: '3' }])
    expect((await rows('SELECT line FROM ss_entries WHERE tenant = $1 AND session = $2 ORDER BY seq', ['acme', `s${roots}`])).map((r) => r.line))
      .toEqual([entry('e1', 'héllo'), entry('e2'), entry('e3')])
    expect(await s.readText(p)).toBe(`${lines}${entry('e2')}\n${entry('e3')}\n`)
    expect(s.statSync(p).size).toBe(Buffer.byteLength(await s.readText(p)))
    expect(await s.readTextPrefix(p, 10)).toBe(lines.slice(0, 10))
  })

  it('serves everything again from a fresh catalog under another DATA_DIR: paths, sizes, mtimes, bytes', async () => {
    const text = `${header(`r${roots}`)}\n${entry('e1')}\n`
    await s.writeText(join(root, 'sessions', '--w--', 'x.jsonl'), text)
    await s.writeText(join(root, 'terminal-sessions', 'tty1'), 'cwd\nfile\n')
    const other = `/elsewhere-${roots}`
    const again = await PgSessionStorage.open(database.pool, { dataDir: other })
    for (const [rel, content] of [['sessions/--w--/x.jsonl', text], ['terminal-sessions/tty1', 'cwd\nfile\n']] as const) {
      expect(again.statSync(join(other, rel))).toEqual(s.statSync(join(root, rel)))
      expect(await again.readText(join(other, rel))).toBe(content)
    }
    expect(again.listDirsSync(join(other, 'sessions'))).toEqual([join(other, 'sessions', '--w--')])
  })

  it('a rewrite (temp file, rename) replaces the session rows in one transaction; the temp file is gone', async () => {
    const target = join(root, 'sessions', '--w--', 'y.jsonl')
    await s.writeText(target, `${header(`y${roots}`)}\n${entry('e1')}\n${entry('e2')}\n`)
    const tmp = join(root, 'sessions', '--w--', '.y.jsonl.0011223344556677.tmp')
    const w = s.openWriter(tmp, { flags: 'w' })
    await w.writeLine(`${header(`y${roots}`)}\n${entry('e2')}\n`)
    await w.fsync()
    await w.close()
    await s.rename(tmp, target)
    expect(await s.readText(target)).toBe(`${header(`y${roots}`)}\n${entry('e2')}\n`)
    expect(await rows('SELECT id FROM ss_entries WHERE session = $1', [`y${roots}`])).toEqual([{ id: 'e2' }])
    expect(await rows('SELECT path FROM ss_files WHERE path LIKE $1', ['%.tmp'])).toEqual([])
  })

  it('keeps entries whose ids are empty or hold a newline as rows too', async () => {
    const p = join(root, 'sessions', '--w--', 'odd.jsonl')
    const first = `${header(`o${roots}`)}\n${entry('')}\n${entry('a\nb')}\n`
    await s.writeText(p, first)
    const w = s.openWriter(p, { flags: 'a' })
    await w.writeLine(`${entry('\n')}\n${entry('c')}\n`)
    await w.close()
    expect(await s.readText(p)).toBe(`${first}${entry('\n')}\n${entry('c')}\n`)
    expect((await rows('SELECT id FROM ss_entries WHERE session = $1 ORDER BY seq', [`o${roots}`])).map((r) => r.id)).toEqual(['', 'a\nb', '\n', 'c'])
  })

  it('a file that is not of session form, or an append that would break it, is kept whole as a plain file', async () => {
    const torn = join(root, 'sessions', '--w--', 'torn.jsonl')
    await s.writeText(torn, `${header(`t${roots}`)}\n{"type":"mess`)
    expect(await s.readText(torn)).toBe(`${header(`t${roots}`)}\n{"type":"mess`)
    const p = join(root, 'sessions', '--w--', 'dup.jsonl')
    await s.writeText(p, `${header(`d${roots}`)}\n${entry('e1')}\n`)
    const w = s.openWriter(p, { flags: 'a' })
    await w.writeLine(`${entry('e1')}\n`)
    await w.writeLine('not json\n')
    await w.close()
    expect(await s.readText(p)).toBe(`${header(`d${roots}`)}\n${entry('e1')}\n${entry('e1')}\nnot json\n`)
    expect(await rows('SELECT count(*)::int AS n FROM ss_sessions WHERE id = $1', [`d${roots}`])).toEqual([{ n: 0 }])
    expect(s.statSync(p).size).toBe(Buffer.byteLength(await s.readText(p)))
  })

  it('a second file with a session id its tenant already has stays a plain file', async () => {
    const text = `${header(`c${roots}`)}\n`
    await s.writeText(join(root, 'sessions', '--a--', 'one.jsonl'), text)
    await s.writeText(join(root, 'sessions', '--b--', 'two.jsonl'), text)
    await s.writeText(join(root, 'tenants', 't2', 'sessions', '--a--', 'one.jsonl'), text)
    expect(await s.readText(join(root, 'sessions', '--b--', 'two.jsonl'))).toBe(text)
    expect((await rows('SELECT tenant FROM ss_sessions WHERE id = $1 ORDER BY tenant', [`c${roots}`])).map((r) => r.tenant)).toEqual(['default', 't2'])
  })

  it('a failed writeTextSync is thrown by the next operation on its path, and the catalog forgets it', async () => {
    const p = join(root, 'sessions', 'x.txt')
    const broken = await PgSessionStorage.open(database.pool, { dataDir: root })
    await database.pool.query('ALTER TABLE ss_files ADD CONSTRAINT ss_files_probe CHECK (octet_length(content) < 5) NOT VALID')
    try {
      broken.writeTextSync(p, 'too long for the check')
      expect(broken.existsSync(p)).toBe(true)
      await expect(broken.readText(p)).rejects.toMatchObject({ code: '23514' })
      expect(broken.existsSync(p)).toBe(false)
    } finally {
      await database.pool.query('ALTER TABLE ss_files DROP CONSTRAINT ss_files_probe')
    }
  })

  it('reads a session in pieces, a page of entry rows per query in one snapshot, that join to the file', async () => {
    const p = join(root, 'sessions', '--w--', 'big.jsonl')
    const count = TEXT_PAGE_ROWS + 500
    const text = `${header(`b${roots}`)}\n${Array.from({ length: count }, (_, i) => `${entry(`e${i}`, 'x'.repeat(100))}\n`).join('')}`
    await s.writeText(p, text)
    const pages = vi.spyOn(pg.Client.prototype, 'query')
    const pieces: string[] = []
    let entryReads: unknown[]
    try {
      for await (const piece of s.readTextChunks(p)) pieces.push(piece)
      entryReads = pages.mock.calls.filter(([q]) => JSON.stringify(q).includes('FROM ss_entries'))
    } finally {
      pages.mockRestore()
    }
    expect(pieces.join('')).toBe(text)
    expect(pieces.length).toBeGreaterThan(3)
    expect(pieces.every((piece) => piece.length < 70_000)).toBe(true)
    expect(entryReads).toHaveLength(Math.ceil(count / TEXT_PAGE_ROWS))
  })

  it('a reader that stops after the first piece gives its connection back, and a deleted session reads as ENOENT', async () => {
    const p = join(root, 'sessions', '--w--', 'stop.jsonl')
    await s.writeText(p, `${header(`st${roots}`)}\n${Array.from({ length: 3000 }, (_, i) => `${entry(`e${i}`, 'y'.repeat(100))}\n`).join('')}`)
    const reader = s.readTextChunks(p)[Symbol.asyncIterator]()
    expect(((await reader.next()).value as string).startsWith(header(`st${roots}`))).toBe(true)
    await reader.return?.()
    expect(database.pool.totalCount - database.pool.idleCount).toBe(0)
    await rows('DELETE FROM ss_sessions WHERE id = $1', [`st${roots}`])
    const pieces = async (): Promise<void> => { for await (const _ of s.readTextChunks(p)) void _ }
    await expect(pieces()).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('keeps an answer handed to keepWithLines in the transaction of the write that carries its lines, and no other', async () => {
    const id = `k${roots}`
    const p = join(root, 'sessions', '--w--', 'k.jsonl')
    const w = s.openWriter(p, { flags: 'a' })
    await w.writeLine(`${header(id)}\n${entry('e1')}\n`)
    const answer = async (key: string): Promise<unknown> =>
      (await rows('SELECT response #>> \'{}\' AS r FROM ss_idempotency_keys WHERE session = $1 AND key = $2', [id, key]))[0]?.r
    expect(await s.replays.claim(p, id, 'k1', 'h1', 'o1')).toEqual({ held: true })
    expect(await s.replays.claim(p, id, 'k2', 'h2', 'o2')).toEqual({ held: true })
    const kept = s.replays.keepWithLines(p, id, 'k1', 'o1', { bodyHash: 'h1', response: { lastSeq: 3 } }, ['e2', 'e3'])
    const dropped = s.replays.keepWithLines(p, id, 'k2', 'o2', { bodyHash: 'h2', response: { lastSeq: 4 } }, ['e4'])
    dropped.drop()
    // A write without all of its lines does not carry it.
    await w.writeLine(`${entry('e2')}\n`)
    expect(kept.committed).toBe(false)
    expect(await answer('k1')).toBeNull()
    await w.writeLine(`${entry('e3')}\n${entry('e2b')}\n`)
    expect(kept.committed).toBe(false) // e2 went before: this write holds e3 only
    kept.drop()
    const again = s.replays.keepWithLines(p, id, 'k1', 'o1', { bodyHash: 'h1', response: { lastSeq: 5 } }, ['e5', 'e6'])
    await w.writeLine(`${entry('e5')}\n${entry('e6')}\n`)
    expect(again.committed).toBe(true)
    expect(await answer('k1')).toBe('{"lastSeq":5}')
    await w.writeLine(`${entry('e4')}\n`)
    expect(await answer('k2')).toBeNull()
    await w.close()
    // The first write of a file carries an answer too (a whole file, stored in one transaction).
    const q = join(root, 'sessions', '--w--', 'k2.jsonl')
    expect(await s.replays.claim(q, `${id}b`, 'k3', 'h3', 'o3')).toEqual({ held: true })
    const first = s.replays.keepWithLines(q, `${id}b`, 'k3', 'o3', { bodyHash: 'h3', response: 'first' }, ['f1'])
    await s.writeText(q, '')
    const w2 = s.openWriter(q, { flags: 'a' })
    await w2.writeLine(`${header(`${id}b`)}\n${entry('f1')}\n`)
    await w2.close()
    expect(first.committed).toBe(true)
    expect((await rows('SELECT response #>> \'{}\' AS r FROM ss_idempotency_keys WHERE key = $1', ['k3']))[0]?.r).toBe('"first"')
    // So does an unsaved session, stored whole.
    const u = join(root, 'sessions', '--w--', 'u.jsonl')
    expect(await s.replays.claim(u, `${id}u`, 'k4', 'h4', 'o4')).toEqual({ held: true })
    const unsaved = s.replays.keepWithLines(u, `${id}u`, 'k4', 'o4', { bodyHash: 'h4', response: 'unsaved' }, ['u1'])
    await s.unsaved.put(u, `${header(`${id}u`)}\n${entry('u1')}\n`)
    expect(unsaved.committed).toBe(true)
    expect((await rows('SELECT response #>> \'{}\' AS r FROM ss_idempotency_keys WHERE key = $1', ['k4']))[0]?.r).toBe('"unsaved"')
  })

  it('refuses a path outside DATA_DIR', async () => {
    await expect(s.writeText('/not-the-data-dir/f', 'x')).rejects.toMatchObject({ code: 'SS_PATH_OUTSIDE_DATA_DIR' })
  })
})
