/**
 * A whole store as `session-store migrate --from … --to …` sees it: the session store of every
 * tenant and each tenant's `BlobStore`. `openStore` is the one place that knows how a DATA_DIR
 * and a PostgreSQL database become such a store; the move itself (store-move.ts) works on the
 * interfaces only.
 */
import { join } from 'node:path'
import { tenantRoot } from '../auth/tenants.js'
import { FileBlobStore } from '../blobs/index.js'
import type { BlobStore } from '../blobs/types.js'
import { FileSessionStorage } from '../storage/index.js'
import { JsonlStore } from '../storage/jsonl/jsonl-store.js'
import type { SessionStore } from '../storage/store.js'
import { CliError } from './args.js'
import { lockDataDir, resolveDataDir } from './data-dir.js'

/** Where a store lives: a DATA_DIR on this machine or a PostgreSQL database. */
export type StoreTarget = { kind: 'data-dir', dir: string } | { kind: 'postgres', url: string }

export interface Store {
  /** For messages: the DATA_DIR path, or the database URL without its password. */
  label: string
  sessions: SessionStore
  blobs(tenant: string): BlobStore
  /** Releases what opening took (the DATA_DIR lock, the index, the database pool). Idempotent. */
  close(): Promise<void>
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i

/** `--from`/`--to` value: a `postgres://` or `postgresql://` URL, else a DATA_DIR path (against `cwd`). */
export function parseStoreTarget (value: string, cwd: string): StoreTarget {
  return POSTGRES_URL.test(value) ? { kind: 'postgres', url: value } : { kind: 'data-dir', dir: resolveDataDir(cwd, value, false) }
}

/** `url` with its password replaced by `***`. */
export function redactUrl (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'the database URL'
  }
}

const LOCK_HINT = 'stop that server first: migrate needs the DATA_DIR to itself'

/**
 * Opens `target` for a move. A DATA_DIR is locked until `close()` (a source must exist; a
 * destination is created). A database is migrated to the current schema.
 */
export async function openStore (target: StoreTarget, role: 'source' | 'destination'): Promise<Store> {
  if (target.kind === 'data-dir') {
    const dir = resolveDataDir(target.dir, '.', role === 'source')
    const release = await lockDataDir(dir, LOCK_HINT)
    const sessions = JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })
    let closed: Promise<void> | undefined
    return {
      label: dir,
      sessions,
      blobs: (tenant) => new FileBlobStore(join(tenantRoot(dir, tenant), 'blobs')),
      close: async () => { closed ??= sessions.close().finally(release); await closed },
    }
  }
  const label = redactUrl(target.url)
  // Loaded here, so that no other command pays for the database driver at start-up.
  const [{ createPool }, { migrate }, { PgBlobStore }, { PgStore }, { upgradeLegacy }, { acquireInstanceLock }, { silentLogger }] = await Promise.all([
    import('../storage/postgres/pool.js'), import('../storage/postgres/migrate.js'), import('../storage/postgres/pg-blob-store.js'),
    import('../storage/postgres/pg-store.js'), import('../storage/postgres/pg-upgrade.js'), import('../storage/postgres/instance-lock.js'),
    import('../session/logger.js'),
  ])
  let release = async (): Promise<void> => {}
  try {
    // Servers on the database would serve sessions half moved: refuse while one runs, and keep
    // them from starting until the move is done.
    const lock = await acquireInstanceLock(target.url, 'migration')
    const pool = createPool(target.url, { max: 4, statementTimeoutMs: 120_000 })
    let sessions: { close: () => Promise<void> } | undefined
    release = async () => {
      try {
        await sessions?.close()
        await pool.end()
      } finally {
        await lock.release()
      }
    }
    await migrate(pool)
    await upgradeLegacy(pool, '/', silentLogger)
    const store = await PgStore.open(pool, { listenUrl: target.url, logger: silentLogger })
    sessions = store
    let closed: Promise<void> | undefined
    return { label, sessions: store, blobs: (tenant) => new PgBlobStore(pool, tenant), close: async () => { closed ??= release(); await closed } }
  } catch (err) {
    await release()
    if (err instanceof CliError) throw err
    throw new CliError(`${label}: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
  }
}
