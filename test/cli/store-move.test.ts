/**
 * The store move behind `session-store migrate --from/--to`, in process, over the interfaces:
 * a DATA_DIR on disk to a memory store (with memory or PostgreSQL blobs) and back, refusal of a
 * non-empty destination, `--merge`, and a verification that catches a destination which does
 * not hold what was written.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FileBlobStore, MemoryBlobStore } from '../../src/blobs/index.js'
import { sha256Hex } from '../../src/blobs/hash.js'
import type { BlobStore } from '../../src/blobs/types.js'
import { Reporter } from '../../src/cli/progress.js'
import { moveStore, type MoveResult } from '../../src/cli/store-move.js'
import type { Store } from '../../src/cli/stores.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { JsonlStore } from '../../src/storage/jsonl/jsonl-store.js'
import { PgBlobStore } from '../../src/storage/postgres/pg-blob-store.js'
import type { SessionStore } from '../../src/storage/store.js'
import { pgAvailable, useMigratedDatabase } from '../helpers/pg.js'
import { FIXTURES, memoryIo } from './helpers.js'

const SESSION = 'pi-v1-large-session.jsonl'
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(70_000, 3)])
const ACME = '{"type":"session","id":"ü","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x/ü"}\n{"type":"message"}\n'

let root: string
let dataDir: string
const stores: Store[] = []
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ss-move-'))
  dataDir = join(root, 'data')
})
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close()
  rmSync(root, { recursive: true, force: true })
})

/** A DATA_DIR with two tenants: sessions, a breadcrumb, a set-aside file, a temp file and blobs. */
async function seed (): Promise<{ fixtureId: string }> {
  const dir = join(dataDir, 'sessions', '--w--')
  mkdirSync(dir, { recursive: true })
  copyFileSync(join(FIXTURES, SESSION), join(dir, SESSION))
  writeFileSync(join(dir, 'a.jsonl.corrupt-2026'), 'not a session, stays behind\n')
  writeFileSync(join(dir, '.a.jsonl.0123456789abcdef.tmp'), 'left by a crash')
  mkdirSync(join(dataDir, 'terminal-sessions'))
  writeFileSync(join(dataDir, 'terminal-sessions', 'term-1'), `/w\n${join(dir, SESSION)}\n`)
  const acme = join(dataDir, 'tenants', 'acme', 'sessions', '--x-ü--')
  mkdirSync(acme, { recursive: true })
  writeFileSync(join(acme, 's.jsonl'), ACME)
  await new FileBlobStore(join(dataDir, 'blobs')).put(PNG)
  await new FileBlobStore(join(dataDir, 'tenants', 'acme', 'blobs')).put(Buffer.from('acme blob'))
  return { fixtureId: JSON.parse(readFileSync(join(FIXTURES, SESSION), 'utf8').split('\n')[0] as string).id as string }
}

function opened (store: Store): Store {
  stores.push(store)
  return store
}

function diskStore (dir: string): Store {
  const sessions = JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })
  return opened({ label: dir, sessions, blobs: (t) => new FileBlobStore(join(dir, t === 'default' ? '' : `tenants/${t}`, 'blobs')), close: async () => { await sessions.close() } })
}

function perTenant (): (tenant: string) => BlobStore {
  const stores = new Map<string, MemoryBlobStore>()
  return (t) => stores.get(t) ?? stores.set(t, new MemoryBlobStore()).get(t)!
}

/** A store in memory, with one blob store per tenant from `blobs`. */
function memoryStore (blobs: (tenant: string) => BlobStore = perTenant(), sessions: SessionStore = JsonlStore.inMemory('/mem')): Store {
  return opened({ label: 'memory', sessions, blobs, close: async () => { await sessions.close() } })
}

async function textOf (store: Store, tenant: string, id: string): Promise<string | undefined> {
  const stored = await store.sessions.read(tenant, id)
  if (stored === undefined) return undefined
  let text = ''
  for await (const chunk of stored.text) text += chunk
  return text
}

async function move (from: Store, to: Store, merge = false, signal = new AbortController().signal): Promise<MoveResult & { stderr: string }> {
  const { io, stderr } = memoryIo()
  const result = await moveStore(from, to, { merge, signal }, new Reporter(io.stdout, io.stderr), io.stderr)
  return { ...result, stderr: stderr() }
}

describe('moveStore', () => {
  it('copies every tenant\'s sessions byte for byte, breadcrumbs and blobs, and leaves other files behind', async () => {
    const { fixtureId } = await seed()
    const to = memoryStore()
    const result = await move(diskStore(dataDir), to)
    expect(result.problems).toEqual([])
    expect(result).toMatchObject({ tenants: 2, files: 2, blobs: 2, blobBytes: PNG.length + 9, alreadyThere: 0, interrupted: false })
    expect(Buffer.from(await textOf(to, 'default', fixtureId) ?? '').equals(readFileSync(join(FIXTURES, SESSION)))).toBe(true)
    expect(await textOf(to, 'acme', 'ü')).toBe(ACME)
    expect(await to.sessions.breadcrumbs('default')).toEqual([{ terminalId: 'term-1', cwd: '/w', id: fixtureId }])
    expect(await to.blobs('default').get(sha256Hex(PNG))).toEqual(PNG)
    expect((await to.blobs('acme').get(sha256Hex(Buffer.from('acme blob'))))?.toString()).toBe('acme blob')
    expect(await to.blobs('default').has(sha256Hex(Buffer.from('acme blob')))).toBe(false)
    expect(result.stderr).toMatch(/^copying sessions: 2\/2, /m)
    expect(result.stderr).toMatch(/^copying blobs: 2\/2, /m)
    expect(result.stderr).toMatch(/^verifying: 4\/4, /m)
  })

  it('moving there and back gives every session file byte for byte, and the breadcrumb names it', async () => {
    const { fixtureId } = await seed()
    const middle = memoryStore()
    expect((await move(diskStore(dataDir), middle)).problems).toEqual([])
    const back = join(root, 'back')
    expect((await move(middle, diskStore(back))).problems).toEqual([])
    const files = readdirSync(join(back, 'sessions'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
    expect(files.map((e) => e.name)).toEqual([`2025-11-20T23-33-50-805Z_${fixtureId}.jsonl`])
    const file = join(files[0]!.parentPath, files[0]!.name)
    expect(readFileSync(file).equals(readFileSync(join(FIXTURES, SESSION)))).toBe(true)
    expect(readFileSync(join(back, 'terminal-sessions', 'term-1'), 'utf8')).toBe(`/w\n${file}\n`)
  })

  it('refuses a destination that holds anything, and writes nothing to it', async () => {
    await seed()
    const to = memoryStore()
    await (await to.sessions.create('default', { id: 'other', lines: [{ id: null, line: '{"type":"session","id":"other","cwd":"/y"}' }], saved: true, info: { id: 'other', cwd: '/y', created: '', modifiedMs: 1, messageCount: 0, firstMessage: '', entryCount: 0 } })).close()
    await expect(move(diskStore(dataDir), to)).rejects.toThrow(/memory is not empty \(1 session, 0 blobs\); pass --merge/)
    expect(await to.sessions.tenants()).toEqual(['default'])
    const blobsOnly = memoryStore()
    await blobsOnly.blobs('acme').put(Buffer.from('x'))
    await expect(move(diskStore(dataDir), blobsOnly)).rejects.toThrow(/not empty \(0 sessions, 1 blob\)/)
  })

  it('--merge adds to a destination, skips what it holds already and never overwrites a differing session', async () => {
    await seed()
    const to = memoryStore()
    expect((await move(diskStore(dataDir), to)).problems).toEqual([])
    const acme = await to.sessions.load('acme', 'ü')
    for await (const chunk of acme?.text ?? []) void chunk // read whole
    await acme?.journal.append({ lines: [{ id: null, line: '{"type":"message","id":"more"}' }], save: true, info: { id: 'ü', cwd: '/x/ü', created: '', modifiedMs: Date.now(), messageCount: 2, firstMessage: '', entryCount: 1 }, answers: [] })
    await acme?.journal.close()
    const again = await move(diskStore(dataDir), to, true)
    expect(again.alreadyThere).toBe(3)
    expect(again.problems).toEqual([
      'acme: session ü: the destination holds a different session of this id (left unchanged)',
      expect.stringMatching(/^verify acme: session ü: differs after the copy \(sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\)$/),
    ])
    expect(await textOf(to, 'acme', 'ü')).toBe(ACME + '{"type":"message","id":"more"}\n')
  })

  it('verification reports a destination that does not read back what was written', async () => {
    const { fixtureId } = await seed()
    const good = perTenant()
    const inner = good('default')
    const badBlobs: BlobStore = { // stores the bytes reversed: under their hash, but not the right ones
      put: async (b) => await inner.put(Buffer.from([...b].reverse())),
      get: async (h) => await inner.get(h),
      has: async (h) => await inner.has(h),
      list: () => inner.list!(),
      scan: () => inner.scan(),
      remove: async (hashes, before) => await inner.remove(hashes, before),
      usage: async () => await inner.usage(),
    }
    const sessions = JsonlStore.inMemory('/mem')
    const lossy = new Proxy(sessions, {
      get (target, prop) {
        if (prop !== 'read') return (Reflect.get(target, prop) as (...a: unknown[]) => unknown).bind(target)
        return async (tenant: string, id: string) => {
          const stored = await target.read(tenant, id)
          if (stored === undefined || id !== fixtureId) return stored
          let text = ''
          for await (const chunk of stored.text) text += chunk
          return { size: stored.size - 1, text: [text.slice(0, -1)] }
        }
      },
    })
    const to = memoryStore((t) => t === 'default' ? badBlobs : good(t), lossy)
    const result = await move(diskStore(dataDir), to)
    expect(result.problems).toEqual([
      expect.stringMatching(new RegExp(`^verify default: session ${fixtureId}: differs after the copy`)),
      `verify default: blob ${sha256Hex(PNG)}: missing from the destination`,
    ])
  })

  it('stops between sessions once interrupted', async () => {
    await seed()
    const controller = new AbortController()
    controller.abort()
    const result = await move(diskStore(dataDir), memoryStore(), false, controller.signal)
    expect(result).toMatchObject({ interrupted: true, files: 0, blobs: 0 })
  })
})

describe.runIf(pgAvailable)('moveStore with blobs in PostgreSQL', () => {
  const database = useMigratedDatabase(4)

  it('moves a DATA_DIR\'s blobs into the database per tenant and back, verified', async () => {
    await seed()
    const inDb = memoryStore((t) => new PgBlobStore(database.pool, t, { chunkBytes: 16 * 1024 }))
    expect((await move(diskStore(dataDir), inDb)).problems).toEqual([])
    const { rows } = await database.pool.query('SELECT tenant, media_type, size FROM ss_blobs ORDER BY tenant')
    expect(rows).toEqual([
      { tenant: 'acme', media_type: 'application/octet-stream', size: '9' },
      { tenant: 'default', media_type: 'image/png', size: String(PNG.length) },
    ])
    const back = join(root, 'back')
    expect((await move(inDb, diskStore(back))).problems).toEqual([])
    expect(readFileSync(join(back, 'blobs', sha256Hex(PNG))).equals(PNG)).toBe(true)
    expect(readFileSync(join(back, 'tenants', 'acme', 'blobs', sha256Hex(Buffer.from('acme blob'))), 'utf8')).toBe('acme blob')
  })
})
