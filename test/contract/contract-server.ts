/**
 * A real listening server for the contract suite: `buildApp` over the disk storage and blob
 * store in a fresh DATA_DIR, listening on an ephemeral port. Storage calls pass through a fault
 * switchboard, so that the suite can provoke the statuses a healthy disk never gives (507, 503).
 * Files seeded before start give what HTTP alone cannot: a session of a version this server
 * cannot read (422), one whose reads fail (507), and one whose move destination is taken (409).
 */
import { storeStack } from '../helpers/stack.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp, type App } from '../../src/app.js'
import { FileBlobStore } from '../../src/blobs/index.js'
import type { BlobStore } from '../../src/blobs/types.js'
import { FileSessionStorage, type SessionStorage } from '../../src/storage/index.js'
import { testConfig } from '../helpers/app.js'

/** Largest request body of the contract server, in bytes (small, so that 413 is cheap). */
export const BODY_LIMIT = 256 * 1024

/** Ids and cwds of the seeded fixtures and of the cwd whose directory cannot be written. */
export const FIXTURES = {
  tooNew: { id: 'too-new', cwd: '/too-new' },
  unreadable: { id: 'unreadable', cwd: '/unreadable' },
  /** Moving this session to `target` finds a file of its name there. */
  moveBlocked: { id: 'move-blocked', cwd: '/move-blocked', target: '/move-target' },
  brokenCwd: '/broken',
} as const

export interface Faults {
  /** Session-storage reads of a path containing one of these fail with EIO. */
  reads: Set<string>
  /** Session-storage writes of a path containing one of these fail with EIO. */
  writes: Set<string>
  /** Every blob-store call fails with EIO while true. */
  blobs: boolean
}

export interface ContractServer {
  baseUrl: string
  faults: Faults
  /** Holds the default tenant's collection (as a collection running elsewhere would) until the returned function is called. */
  holdCollection: () => () => Promise<void>
  close: () => Promise<void>
}

const READS = new Set(['readText', 'readTextPrefix', 'readTextChunks'])
const WRITES = new Set(['writeText', 'writeTextSync', 'ensureDirSync', 'rename', 'unlink', 'openWriter', 'syncDir'])

const eio = (what: string): Error => Object.assign(new Error(`EIO: i/o error, ${what} (contract fault)`), { code: 'EIO' })

function faultyStorage (inner: SessionStorage, faults: Faults): SessionStorage {
  const hits = (set: Set<string>, args: unknown[]): boolean =>
    args.some((a) => typeof a === 'string' && [...set].some((part) => a.includes(part)))
  return new Proxy(inner, {
    get (target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      const name = String(prop)
      return (...args: unknown[]) => {
        const failing = (READS.has(name) && hits(faults.reads, args)) || (WRITES.has(name) && hits(faults.writes, args))
        if (!failing) return (value as (...a: unknown[]) => unknown).apply(target, args)
        if (name.endsWith('Sync') || name === 'openWriter') throw eio(name)
        // An async iterable whose first step fails, like a real read of an unreadable file.
        if (name === 'readTextChunks') return { [Symbol.asyncIterator]: () => ({ next: async () => { throw eio(name) } }) }
        return Promise.reject(eio(name))
      }
    },
  })
}

function faultyBlobs (inner: BlobStore, faults: Faults): BlobStore {
  const guard = async <T>(run: () => Promise<T>): Promise<T> => { if (faults.blobs) throw eio('blob'); return await run() }
  return {
    put: async (bytes) => await guard(async () => await inner.put(bytes)),
    get: async (hash) => await guard(async () => await inner.get(hash)),
    has: async (hash) => await guard(async () => await inner.has(hash)),
    scan: () => inner.scan(),
    remove: async (hashes, before) => await guard(async () => await inner.remove(hashes, before)),
    usage: async () => await inner.usage(),
  }
}

function seed (storage: SessionStorage, dataDir: string): void {
  const file = (dir: string, id: string): string => join(dataDir, 'sessions', dir, `2026-01-01T00-00-00-000Z_${id}.jsonl`)
  const header = (id: string, cwd: string, version: number): string =>
    JSON.stringify({ type: 'session', version, id, timestamp: '2026-01-01T00:00:00.000Z', cwd }) + '\n'
  const { tooNew, unreadable, moveBlocked } = FIXTURES
  const entry = JSON.stringify({
    type: 'message', id: 'u1', parentId: null, timestamp: '2026-01-01T00:00:01.000Z', message: { role: 'user', content: 'hi', timestamp: 1 },
  }) + '\n'
  storage.writeTextSync(file('--too-new--', tooNew.id), header(tooNew.id, tooNew.cwd, 4))
  storage.writeTextSync(file('--unreadable--', unreadable.id), header(unreadable.id, unreadable.cwd, 3) + entry)
  storage.writeTextSync(file('--move-blocked--', moveBlocked.id), header(moveBlocked.id, moveBlocked.cwd, 3) + entry)
  storage.writeTextSync(file('--move-target--', moveBlocked.id), 'not a session\n')
}

export async function startContractServer (): Promise<ContractServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'session-store-contract-'))
  const faults: Faults = { reads: new Set(), writes: new Set(['--broken--']), blobs: false }
  const disk = new FileSessionStorage()
  seed(disk, dataDir)
  const storage = faultyStorage(disk, faults)
  const blobs = faultyBlobs(new FileBlobStore(join(dataDir, 'blobs')), faults)
  const config = testConfig({ dataDir, storage: 'disk', bodyLimit: BODY_LIMIT })
  const stack = storeStack({ dataDir, storage, blobs })
  const app: App = await buildApp({ config, store: stack.store, blobs, registry: stack.registry, logger: false })
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })
  await stack.store.ready()
  faults.reads.add('--unreadable--')
  const holdCollection = (): () => Promise<void> => {
    let release = (): void => {}
    const held = stack.store.runAlone('blob-gc:default', async () => { await new Promise<void>((resolve) => { release = resolve }) })
    return async () => {
      release()
      await held
    }
  }
  return {
    baseUrl,
    faults,
    holdCollection,
    close: async () => {
      await app.close()
      await stack.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}
