/**
 * The store move behind `session-store migrate --from/--to`, in process, over the interfaces:
 * a DATA_DIR on disk to a store of MemorySessionStorage (and memory or PostgreSQL blobs) and
 * back, refusal of a non-empty destination, `--merge`, and a verification that catches a
 * destination which does not hold what was written.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FileBlobStore, MemoryBlobStore } from '../../src/blobs/index.js'
import { sha256Hex } from '../../src/blobs/hash.js'
import type { BlobStore } from '../../src/blobs/types.js'
import { Reporter } from '../../src/cli/progress.js'
import { moveStore, type MoveResult } from '../../src/cli/store-move.js'
import { layoutStore, type Store } from '../../src/cli/stores.js'
import { FileSessionStorage, MemorySessionStorage } from '../../src/storage/index.js'
import { PgBlobStore } from '../../src/storage/postgres/pg-blob-store.js'
import { pgAvailable, useMigratedDatabase } from '../helpers/pg.js'
import { FIXTURES, memoryIo } from './helpers.js'

const SESSION = 'pi-v1-large-session.jsonl'
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(70_000, 3)])

let root: string
let dataDir: string
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ss-pgmove-'))
  dataDir = join(root, 'data')
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

/** A DATA_DIR with two tenants: sessions, a breadcrumb, a set-aside file, a temp file and blobs. */
async function seed (): Promise<void> {
  const dir = join(dataDir, 'sessions', '--w--')
  mkdirSync(dir, { recursive: true })
  copyFileSync(join(FIXTURES, SESSION), join(dir, SESSION))
  writeFileSync(join(dir, 'a.jsonl.corrupt-2026'), 'not a session, kept anyway\n')
  writeFileSync(join(dir, '.a.jsonl.0123456789abcdef.tmp'), 'left by a crash')
  mkdirSync(join(dataDir, 'terminal-sessions'))
  writeFileSync(join(dataDir, 'terminal-sessions', 'term-1'), `/w\n${join(dir, SESSION)}\n`)
  const acme = join(dataDir, 'tenants', 'acme', 'sessions', '--x-ü--')
  mkdirSync(acme, { recursive: true })
  writeFileSync(join(acme, 's.jsonl'), '{"type":"session","id":"ü","cwd":"/x/ü"}\n{"type":"message"}\n')
  await new FileBlobStore(join(dataDir, 'blobs')).put(PNG)
  await new FileBlobStore(join(dataDir, 'tenants', 'acme', 'blobs')).put(Buffer.from('acme blob'))
}

function diskStore (dir: string): Store {
  return layoutStore({ label: dir, storage: new FileSessionStorage(), dataDir: dir, blobs: (t) => new FileBlobStore(join(dir, t === 'default' ? '' : `tenants/${t}`, 'blobs')) })
}

/** A store over one MemorySessionStorage rooted at `/mem`, with one blob store per tenant from `blobs`. */
function memoryStore (blobs: (tenant: string) => BlobStore = perTenant(), storage = new MemorySessionStorage()): Store & { storage: MemorySessionStorage } {
  return layoutStore({ label: 'memory', storage, dataDir: '/mem', blobs }) as Store & { storage: MemorySessionStorage }
}

function perTenant (): (tenant: string) => BlobStore {
  const stores = new Map<string, MemoryBlobStore>()
  return (t) => stores.get(t) ?? stores.set(t, new MemoryBlobStore()).get(t)!
}

/** Every file below `dir` except temp files, as relative path → bytes. */
function tree (dir: string): Record<string, string> {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.startsWith('.'))
  return Object.fromEntries(entries.map((e) => [relative(dir, join(e.parentPath, e.name)), readFileSync(join(e.parentPath, e.name), 'base64')]))
}

async function move (from: Store, to: Store, merge = false, signal = new AbortController().signal): Promise<MoveResult & { stderr: string }> {
  const { io, stderr } = memoryIo()
  const result = await moveStore(from, to, { merge, signal }, new Reporter(io.stdout, io.stderr), io.stderr)
  return { ...result, stderr: stderr() }
}

describe('moveStore', () => {
  it('copies every tenant\'s files byte for byte and every blob, leaves temp files out, and rebases breadcrumbs', async () => {
    await seed()
    const to = memoryStore()
    const result = await move(diskStore(dataDir), to)
    expect(result.problems).toEqual([])
    expect(result).toMatchObject({ tenants: 2, files: 4, blobs: 2, blobBytes: PNG.length + 9, alreadyThere: 0, interrupted: false })
    const session = '/mem/sessions/--w--/' + SESSION
    expect(Buffer.from(await to.storage.readText(session)).equals(readFileSync(join(FIXTURES, SESSION)))).toBe(true)
    expect(await to.storage.readText('/mem/terminal-sessions/term-1')).toBe(`/w\n${session}\n`)
    expect(await to.storage.readText('/mem/tenants/acme/sessions/--x-ü--/s.jsonl')).toContain('"id":"ü"')
    expect(await to.storage.exists('/mem/sessions/--w--/.a.jsonl.0123456789abcdef.tmp')).toBe(false)
    expect(await to.blobs('default').get(sha256Hex(PNG))).toEqual(PNG)
    expect((await to.blobs('acme').get(sha256Hex(Buffer.from('acme blob'))))?.toString()).toBe('acme blob')
    expect(await to.blobs('default').has(sha256Hex(Buffer.from('acme blob')))).toBe(false)
    expect(result.stderr).toMatch(/^copying session files: 4\/4, /m)
    expect(result.stderr).toMatch(/^copying blobs: 2\/2, /m)
    expect(result.stderr).toMatch(/^verifying: 6\/6, /m)
  })

  it('moving there and back gives the original DATA_DIR, file for file', async () => {
    await seed()
    const middle = memoryStore()
    expect((await move(diskStore(dataDir), middle)).problems).toEqual([])
    const back = join(root, 'back')
    expect((await move(middle, diskStore(back))).problems).toEqual([])
    const original = tree(dataDir)
    original['terminal-sessions/term-1'] = Buffer.from(`/w\n${join(back, 'sessions', '--w--', SESSION)}\n`).toString('base64')
    expect(tree(back)).toEqual(original)
  })

  it('refuses a destination that holds anything, and writes nothing to it', async () => {
    await seed()
    const to = memoryStore()
    to.storage.writeTextSync('/mem/sessions/--y--/other.jsonl', 'x\n')
    await expect(move(diskStore(dataDir), to)).rejects.toThrow(/memory is not empty \(1 file, 0 blobs\); pass --merge/)
    expect(to.storage.listDirsSync('/mem/sessions')).toEqual(['/mem/sessions/--y--'])
    const blobsOnly = memoryStore()
    await blobsOnly.blobs('acme').put(Buffer.from('x'))
    await expect(move(diskStore(dataDir), blobsOnly)).rejects.toThrow(/not empty \(0 files, 1 blob\)/)
  })

  it('--merge adds to a destination, skips what it holds already and never overwrites a differing file', async () => {
    await seed()
    const to = memoryStore()
    expect((await move(diskStore(dataDir), to)).problems).toEqual([])
    const changed = '/mem/tenants/acme/sessions/--x-ü--/s.jsonl'
    to.storage.writeTextSync(changed, 'changed\n')
    to.storage.writeTextSync('/mem/sessions/--z--/extra.jsonl', 'extra\n')
    const again = await move(diskStore(dataDir), to, true)
    expect(again.alreadyThere).toBe(5)
    expect(again.problems).toEqual([
      'acme: sessions/--x-ü--/s.jsonl: the destination holds a different file at this path (left unchanged)',
      expect.stringMatching(/^verify acme: sessions\/--x-ü--\/s\.jsonl: differs after the copy \(sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\)$/),
    ])
    expect(await to.storage.readText(changed)).toBe('changed\n')
    expect(await to.storage.readText('/mem/sessions/--z--/extra.jsonl')).toBe('extra\n')
  })

  it('verification reports a destination that does not read back what was written', async () => {
    await seed()
    class Lossy extends MemorySessionStorage {
      override async readText (path: string): Promise<string> {
        const text = await super.readText(path)
        return path.endsWith(SESSION) ? text.slice(0, -1) : text
      }
    }
    const good = perTenant()
    const inner = good('default')
    const badBlobs: BlobStore = { // stores the bytes reversed: under their hash, but not the right ones
      put: async (b) => await inner.put(Buffer.from([...b].reverse())),
      get: async (h) => await inner.get(h),
      has: async (h) => await inner.has(h),
      list: () => inner.list!(),
    }
    const to = memoryStore((t) => t === 'default' ? badBlobs : good(t), new Lossy())
    const result = await move(diskStore(dataDir), to)
    expect(result.problems).toEqual([
      expect.stringMatching(new RegExp(`^verify default: sessions/--w--/${SESSION.replaceAll('.', '\\.')}: differs after the copy`)),
      `verify default: blob ${sha256Hex(PNG)}: missing from the destination`,
    ])
  })

  it('refuses a source file that is not valid UTF-8 (it could not be copied byte for byte) and copies the rest', async () => {
    mkdirSync(join(dataDir, 'sessions', '--w--'), { recursive: true })
    writeFileSync(join(dataDir, 'sessions', '--w--', 'bad.jsonl'), Buffer.from([0x7b, 0xff, 0x7d, 0x0a]))
    writeFileSync(join(dataDir, 'sessions', '--w--', 'good.jsonl'), '{}\n')
    const to = memoryStore()
    const result = await move(diskStore(dataDir), to)
    expect(result.problems).toEqual([
      'default: sessions/--w--/bad.jsonl: not valid UTF-8, so it cannot be copied byte for byte',
      'verify default: sessions/--w--/bad.jsonl: not valid UTF-8, so it cannot be copied byte for byte',
      'verify default: counts: the destination holds 1 file and 0 blobs, the source 2 and 0',
    ])
    expect(await to.storage.exists('/mem/sessions/--w--/bad.jsonl')).toBe(false)
    expect(await to.storage.readText('/mem/sessions/--w--/good.jsonl')).toBe('{}\n')
  })

  it('stops between files once interrupted', async () => {
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
