/**
 * A whole store as `session-store migrate --from … --to …` sees it: the session files of every
 * tenant (through a `SessionStorage`, under each tenant's root) and each tenant's `BlobStore`.
 * `openStore` is the one place that knows how a DATA_DIR and a PostgreSQL database become
 * such a store; the move itself (store-move.ts) works on the interfaces only.
 */
import { basename, join, resolve } from 'node:path'
import { tenantRoot } from '../auth/tenants.js'
import { DEFAULT_TENANT, TENANT_RE } from '../auth/tokens.js'
import { FileBlobStore } from '../blobs/index.js'
import type { BlobStore } from '../blobs/types.js'
import { FileSessionStorage } from '../storage/index.js'
import type { SessionStorage } from '../storage/types.js'
import { CliError } from './args.js'
import { lockDataDir, resolveDataDir } from './data-dir.js'

/** Where a store lives: a DATA_DIR on this machine or a PostgreSQL database. */
export type StoreTarget = { kind: 'data-dir', dir: string } | { kind: 'postgres', url: string }

export interface Store {
  /** For messages: the DATA_DIR path, or the database URL without its password. */
  label: string
  storage: SessionStorage
  /** The root of `tenant` in `storage`'s paths (`sessions/` and `terminal-sessions/` below it). */
  root(tenant: string): string
  /** Every tenant that holds anything, the default tenant first. */
  tenants(): Promise<string[]>
  blobs(tenant: string): BlobStore
  /** Releases what opening took (the DATA_DIR lock, the database pool). Idempotent. */
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

export interface LayoutOptions {
  label: string
  storage: SessionStorage
  /** The default tenant's root; every other tenant's is `<dataDir>/tenants/<tenant>`. */
  dataDir: string
  blobs(tenant: string): BlobStore
  /** Tenants known besides the directories under `<dataDir>/tenants` (e.g. from blob rows). */
  moreTenants?: () => Promise<string[]>
  close?: () => Promise<void>
}

/** A store laid out as a DATA_DIR is (SPEC.md §2.1, one root per tenant), over any storage. */
export function layoutStore (options: LayoutOptions): Store {
  const { storage, dataDir } = options
  let closed: Promise<void> | undefined
  return {
    label: options.label,
    storage,
    root: (tenant) => tenantRoot(dataDir, tenant),
    async tenants () {
      const names = new Set(storage.listDirsSync(join(dataDir, 'tenants')).map((dir) => basename(dir)))
      for (const name of await options.moreTenants?.() ?? []) names.add(name)
      names.delete(DEFAULT_TENANT)
      return [DEFAULT_TENANT, ...[...names].filter((name) => TENANT_RE.test(name)).sort()]
    },
    blobs: options.blobs,
    close: async () => { closed ??= options.close?.() ?? Promise.resolve(); await closed },
  }
}

const LOCK_HINT = 'stop that server first: migrate needs the DATA_DIR to itself'

/**
 * The root the paths of a database store are taken under. A database stores paths relative to
 * its server's DATA_DIR, so any root reads the same files; this one names no directory here.
 */
const DATABASE_ROOT = resolve('/', 'session-store-database')

/**
 * Opens `target` for a move. A DATA_DIR is locked until `close()` (a source must exist; a
 * destination is created). A database is migrated to the current schema.
 */
export async function openStore (target: StoreTarget, role: 'source' | 'destination'): Promise<Store> {
  if (target.kind === 'data-dir') {
    const dir = resolveDataDir(target.dir, '.', role === 'source')
    const release = await lockDataDir(dir, LOCK_HINT)
    return layoutStore({
      label: dir,
      storage: new FileSessionStorage(),
      dataDir: dir,
      blobs: (tenant) => new FileBlobStore(join(tenantRoot(dir, tenant), 'blobs')),
      close: release,
    })
  }
  const label = redactUrl(target.url)
  // Loaded here, so that no other command pays for the database driver at start-up.
  const [{ createPool, query }, { migrate }, { PgBlobStore }, { PgSessionStorage }, { acquireInstanceLock }] = await Promise.all([
    import('../storage/postgres/pool.js'), import('../storage/postgres/migrate.js'), import('../storage/postgres/pg-blob-store.js'),
    import('../storage/postgres/pg-session-storage.js'), import('../storage/postgres/instance-lock.js'),
  ])
  let release = async (): Promise<void> => {}
  try {
    // Servers on the database would serve sessions half moved: refuse while one runs, and keep
    // them from starting until the move is done.
    const lock = await acquireInstanceLock(target.url, 'migration')
    const pool = createPool(target.url, { max: 4, statementTimeoutMs: 120_000 })
    release = async () => {
      try {
        await pool.end()
      } finally {
        await lock.release()
      }
    }
    await migrate(pool)
    const storage = await PgSessionStorage.open(pool, { dataDir: DATABASE_ROOT })
    return layoutStore({
      label,
      storage,
      dataDir: DATABASE_ROOT,
      blobs: (tenant) => new PgBlobStore(pool, tenant),
      moreTenants: async () => (await query<{ tenant: string }>(pool,
        'SELECT tenant FROM ss_sessions UNION SELECT tenant FROM ss_blobs')).rows.map((r) => r.tenant),
      close: release,
    })
  } catch (err) {
    await release()
    if (err instanceof CliError) throw err
    throw new CliError(`${label}: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
  }
}
