/**
 * The JSONL store (disk and memory) against the store contract, then its own cases: the index
 * beside the files, checked against them at start, rebuilt when missing or damaged; files an
 * agent wrote, moved or deleted; the layout of SPEC.md §2.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { encodeCwd } from '../../src/session/cwd.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { JsonlStore } from '../../src/storage/jsonl/jsonl-store.js'
import { header, item, lines, session, storeContract, textOf, userLine } from './contract.js'

const dirs: string[] = []
const tempDir = (): string => { const d = mkdtempSync(join(tmpdir(), 'ss-jsonl-')); dirs.push(d); return d }
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }) })

storeContract('memory', async () => {
  const store = JsonlStore.inMemory('/mem')
  return { store, close: async () => { await store.close() } }
})

storeContract('disk', async () => {
  const dir = tempDir()
  const store = JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })
  return { store, close: async () => { await store.close() } }
})

describe('the disk store', () => {
  const open = (dir: string): JsonlStore => JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })
  const file = (dir: string, cwd: string, name: string, text: string): string => {
    const d = join(dir, 'sessions', encodeCwd(cwd))
    mkdirSync(d, { recursive: true })
    writeFileSync(join(d, name), text)
    return join(d, name)
  }

  it('writes SPEC.md\'s layout: the cwd\'s directory, `<fileTs>_<id>.jsonl`, the index under .session-store', async () => {
    const dir = tempDir()
    const store = open(dir)
    await (await store.create('default', session('abc', [userLine('a', 'x')]))).close()
    await (await store.create('acme', session('abc'))).close()
    await store.close()
    expect(readdirSync(join(dir, 'sessions', '--w--'))).toEqual(['2026-03-14T15-04-07-123Z_abc.jsonl'])
    expect(readdirSync(join(dir, 'tenants', 'acme', 'sessions', '--w--'))).toEqual(['2026-03-14T15-04-07-123Z_abc.jsonl'])
    expect(existsSync(join(dir, '.session-store', 'index.sqlite'))).toBe(true)
  })

  it('finds at start what was written while it was closed, forgets what was deleted, follows a moved directory', async () => {
    const dir = tempDir()
    let store = open(dir)
    await (await store.create('default', session('kept', [userLine('a', 'x')]))).close()
    await (await store.create('default', session('gone', [userLine('a', 'x')]))).close()
    await store.close()
    file(dir, '/agent', 'x_new.jsonl', `${header('new', { cwd: '/agent' })}\n${userLine('q', 'from the agent')}\n`)
    rmSync(join(dir, 'sessions', '--w--', '2026-03-14T15-04-07-123Z_gone.jsonl'))
    store = open(dir)
    const listed = (await store.list('default', { includeEmpty: true, limit: 10 })).items.map((i) => i.id).sort()
    expect(listed).toEqual(['kept', 'new'])
    expect(await store.info('default', 'new')).toMatchObject({ cwd: '/agent', messageCount: 1, firstMessage: 'from the agent' })
    // An agent renames a directory: the session is followed by its file name.
    await store.close()
    mkdirSync(join(dir, 'sessions', '-elsewhere'))
    writeFileSync(join(dir, 'sessions', '-elsewhere', '2026-03-14T15-04-07-123Z_kept.jsonl'), readFileSync(join(dir, 'sessions', '--w--', '2026-03-14T15-04-07-123Z_kept.jsonl')))
    rmSync(join(dir, 'sessions', '--w--'), { recursive: true })
    store = open(dir)
    expect(await textOf(store, 'kept', 'default')).toBe(`${header('kept')}\n${userLine('a', 'x')}\n`)
    await store.close()
  })

  it('rebuilds a missing or damaged index from the files', async () => {
    const dir = tempDir()
    let store = open(dir)
    for (let i = 0; i < 5; i++) await (await store.create('default', session(`s${i}`, [userLine('a', 'x')]))).close()
    await store.close()
    const index = join(dir, '.session-store', 'index.sqlite')
    writeFileSync(index, 'this is not a database, not even close '.repeat(200))
    rmSync(`${index}-wal`, { force: true })
    store = open(dir)
    expect((await store.list('default', { includeEmpty: true, limit: 10 })).items).toHaveLength(5)
    await store.close()
    rmSync(join(dir, '.session-store'), { recursive: true })
    store = open(dir)
    expect((await store.list('default', { includeEmpty: true, limit: 10 })).items).toHaveLength(5)
    await store.close()
  })

  it('appends with one write and one fdatasync per batch, to the file an agent can read', async () => {
    const dir = tempDir()
    const store = open(dir)
    const j = await store.create('default', session('w'))
    await j.append({ lines: lines(userLine('a', '1'), userLine('b', '2')), save: true, info: item('w'), answers: [] })
    await j.close()
    await store.close()
    const path = join(dir, 'sessions', '--w--', '2026-03-14T15-04-07-123Z_w.jsonl')
    expect(readFileSync(path, 'utf8')).toBe(`${header('w')}\n${userLine('a', '1')}\n${userLine('b', '2')}\n`)
  })

  it('refuses to move a session onto another session\'s file and names no server path', async () => {
    const dir = tempDir()
    const store = open(dir)
    const a = await store.create('default', session('same'))
    const b = await store.create('acme', session('same'))
    file(dir, '/z', '2026-03-14T15-04-07-123Z_same.jsonl', `${header('same', { cwd: '/z' })}\n`)
    const refused = await a.rewriteHeader(header('same', { cwd: '/z' }), item('same', { cwd: '/z' })).catch((err: unknown) => err)
    expect(refused).toMatchObject({ code: 'SS_MOVE_DESTINATION_EXISTS', statusCode: 409 })
    expect(String((refused as Error).message)).not.toContain(dir)
    await a.close()
    await b.close()
    await store.close()
  })
})

describe('the disk store after a clean stop', () => {
  const open = (dir: string): JsonlStore => JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })

  it('looks only into the directories that changed, and still finds new, renamed, removed and grown sessions', async () => {
    const dir = tempDir()
    let store = open(dir)
    for (const cwd of ['/a', '/b', '/c']) await (await store.create('default', session(`in${cwd.slice(1)}`, [userLine('x', 'x')], {}, { cwd }))).close()
    await store.close()
    const file = (cwd: string, id: string): string => join(dir, 'sessions', encodeCwd(cwd), `2026-03-14T15-04-07-123Z_${id}.jsonl`)
    // While no server runs: a new session in /a's directory, /b's directory renamed, /c's file grown.
    writeFileSync(join(dir, 'sessions', encodeCwd('/a'), 'x_new.jsonl'), `${header('new', { cwd: '/a' })}\n`)
    mkdirSync(join(dir, 'sessions', '-b-renamed'))
    writeFileSync(join(dir, 'sessions', '-b-renamed', '2026-03-14T15-04-07-123Z_inb.jsonl'), readFileSync(file('/b', 'inb')))
    rmSync(join(dir, 'sessions', encodeCwd('/b')), { recursive: true })
    writeFileSync(file('/c', 'inc'), readFileSync(file('/c', 'inc'), 'utf8') + userLine('y', 'grown') + '\n')
    store = open(dir)
    await store.ready()
    expect((await store.list('default', { includeEmpty: true, limit: 10 })).items.map((i) => i.id).sort()).toEqual(['ina', 'inb', 'inc', 'new'])
    expect(await textOf(store, 'inb', 'default')).toContain('"id":"inb"')
    const loaded = await store.load('default', 'inc')
    for await (const chunk of loaded?.text ?? []) void chunk
    await loaded?.journal.close()
    for (let i = 0; i < 50 && (await store.info('default', 'inc'))?.messageCount !== 2; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await store.info('default', 'inc')).toMatchObject({ messageCount: 2 })
    await store.close()
  })
})
