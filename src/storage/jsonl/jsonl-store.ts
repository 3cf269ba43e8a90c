/**
 * The store of `STORAGE=disk` and `STORAGE=memory`: SPEC.md's JSONL files through a
 * `SessionStorage` (§10: the real file system, or a map in memory), laid out as SPEC.md §2 says,
 * one root per tenant (`DATA_DIR`, `DATA_DIR/tenants/<tenant>`), plus the index that answers
 * listings and lookups (listing-index.ts: a SQLite file in `DATA_DIR/.session-store/`, or one in
 * memory), checked against the files at start (reconcile.ts). One process owns a DATA_DIR.
 */
import { basename, dirname, join, relative, resolve } from 'node:path'
import { SessionExists } from '../../errors.js'
import { readBreadcrumb, writeBreadcrumb } from '../../session/breadcrumbs.js'
import { encodeCwd, sessionFileName } from '../../session/cwd.js'
import { findMovedSessionFile } from '../../session/agent-dirs.js'
import { nowIso } from '../../session/ids.js'
import { silentLogger, type Logger } from '../../session/logger.js'
import { writeAtomically } from '../../session/write-queue.js'
import { fsPath, tenantRoot } from '../paths.js'
import { headerOf, SessionPrefix, textOf } from '../session-head.js'
import type {
  AloneOutcome, Breadcrumb, Journal, ListingItem, ListPage, ListQuery, LoadedSession, NewSession, RecentItem,
  ReindexProgress, SearchPage, SearchQuery, SessionStore, SessionUsage, StoredText,
} from '../store.js'
import { MemorySessionStorage } from '../memory-session-storage.js'
import type { SessionStorage } from '../types.js'
import { JsonlJournal, readCapturing, type JournalContext } from './jsonl-journal.js'
import { ListingIndex, type IndexRow } from './listing-index.js'
import { refLinesOf } from './ref-lines.js'
import { indexFile, reconcile, tenantRoots, type ReconcileContext } from './reconcile.js'
import { rebuildSearch, SearchBackfill } from './search-feed.js'
import { JsonlSearch } from './search-build.js'

export interface JsonlStoreOptions {
  /** `DATA_DIR`, resolved against the working directory. */
  dataDir: string
  storage: SessionStorage
  /** The index file, or `:memory:`; default `DATA_DIR/.session-store/index.sqlite`. */
  indexFile?: string
  logger?: Logger
  /** Index sessions for search (`SEARCH_INDEX`); default true. */
  searchIndex?: boolean
}

/** A header timestamp usable in a file name (SPEC.md §2.3); anything else is replaced by now. */
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/

/** Characters of a file's start kept for its display name: at least `PREFIX_READ_BYTES` bytes. */
const PREFIX_CHARS = 8192

const keyOf = (tenant: string, id: string): string => `${tenant}\n${id}`

export class JsonlStore implements SessionStore {
  readonly #dataDir: string
  readonly #storage: SessionStorage
  readonly #index: ListingIndex
  readonly #search: JsonlSearch
  readonly #log: Logger
  readonly #ctx: JournalContext
  /** Files the listing check found changed, read into the search index in the background. */
  readonly #backfill: SearchBackfill
  /** Open journals; an unsaved session lives in its journal only. */
  readonly #open = new Map<string, JsonlJournal>()
  /** Ids being created now. */
  readonly #creating = new Set<string>()
  #version: number
  /** Resolves once the index was checked against the files. */
  readonly #reconciled: Promise<void>
  #closed: Promise<void> | undefined
  #checked = false
  /** The check against the files went through (not stopped by `close`, not failed). */
  #complete = false
  #closing = false
  #probes = 0
  /** Names `runAlone` holds now (one process owns a DATA_DIR: no other process can hold one). */
  readonly #alone = new Set<string>()

  static open (options: JsonlStoreOptions): JsonlStore {
    return new JsonlStore(options)
  }

  /** A store kept in memory (`STORAGE=memory`, tests): over `storage`, a fresh map by default, with its index in memory. */
  static inMemory (dataDir: string, storage: SessionStorage = new MemorySessionStorage(), logger?: Logger, searchIndex = true): JsonlStore {
    return new JsonlStore({ dataDir, storage, indexFile: ':memory:', logger, searchIndex })
  }

  private constructor (options: JsonlStoreOptions) {
    this.#dataDir = resolve(options.dataDir)
    this.#storage = options.storage
    this.#log = options.logger ?? silentLogger
    const file = options.indexFile ?? join(this.#dataDir, '.session-store', 'index.sqlite')
    if (file !== ':memory:') this.#storage.ensureDirSync(dirname(file))
    const opened = ListingIndex.open(file)
    this.#index = opened.index
    const searchFile = file === ':memory:' ? file : join(dirname(file), 'search.sqlite')
    this.#search = new JsonlSearch(this.#index.database, searchFile, this.#log, options.searchIndex !== false)
    const closedAt = this.#index.takeClosedMark()
    for (const { tenant, id } of this.#index.dropUnsaved()) this.#search.index.remove(tenant, id)
    this.#version = this.#index.maxVersion()
    this.#ctx = {
      storage: this.#storage,
      index: this.#index,
      search: this.#search.index,
      log: this.#log,
      nextVersion: () => ++this.#version,
      abs: (rel) => join(this.#dataDir, rel),
      rel: (path) => fsPath(relative(this.#dataDir, path)),
      dirOf: (tenant, cwd) => join(tenantRoot(this.#dataDir, tenant), 'sessions', encodeCwd(cwd)),
      forget: (journal) => {
        const key = keyOf(journal.tenant, journal.id)
        if (this.#open.get(key) === journal) this.#open.delete(key)
      },
    }
    // A file left unread by a stop is checked again at the next start, which then reads it.
    this.#backfill = new SearchBackfill(this.#ctx, () => this.#closing, (file) => {
      const row = this.#index.get(file.tenant, file.id)
      if (row !== undefined) this.#index.put({ ...row, checked: 0 })
    })
    this.#reconciled = reconcile(this.#reconcileContext(), closedAt, () => this.#closing)
      .then((complete) => { this.#complete = complete })
      .catch((err: unknown) => { this.#log.error({ err }, 'Checking the session index against the files failed') })
      .finally(() => { this.#checked = true })
    this.#search.start({
      checked: async () => {
        await this.#reconciled
        return await this.#backfill.idle() && this.#complete
      },
      fresh: opened.fresh,
      rebuild: async (progress) => {
        const files = this.#index.files().map((f) => ({ ...f, path: this.#ctx.abs(f.path) }))
        return await rebuildSearch(this.#ctx, files, () => this.#closing, progress)
      },
    })
  }

  /** Resolves once the index was checked against the files (start-up). */
  async ready (): Promise<void> { await this.#reconciled }

  async load (tenant: string, id: string): Promise<LoadedSession | undefined> {
    const row = await this.#saved(tenant, id)
    if (row === undefined || this.#open.has(keyOf(tenant, id))) return undefined
    const path = this.#ctx.abs(row.path)
    const { size, mtimeMs } = this.#storage.statSync(path)
    // Written by someone else since it was indexed (an agent, while no server ran): index it again.
    if (size !== row.size) void indexFile(this.#reconcileContext(), { tenant, path, mtimeMs, size }).catch(() => {})
    const journal = new JsonlJournal(this.#ctx, { ...row, size }, new SessionPrefix('', path), undefined, false)
    this.#open.set(keyOf(tenant, id), journal)
    return { text: readCapturing(this.#storage, path, journal, PREFIX_CHARS), size, modifiedMs: row.modified, journal }
  }

  async read (tenant: string, id: string): Promise<StoredText | undefined> {
    const row = await this.#saved(tenant, id)
    if (row === undefined) return undefined
    const path = this.#ctx.abs(row.path)
    return { size: this.#storage.statSync(path).size, text: this.#storage.readTextChunks(path) }
  }

  async create (tenant: string, session: NewSession): Promise<Journal> {
    const key = keyOf(tenant, session.id)
    if (this.#creating.has(key)) throw new SessionExists(session.id)
    this.#creating.add(key)
    try {
      if (this.#index.get(tenant, session.id) === undefined && !this.#checked) await this.#reconciled
      if (this.#index.get(tenant, session.id) !== undefined) throw new SessionExists(session.id)
      const lines = session.lines.map((l) => l.line)
      const header = headerOf(lines) ?? {}
      const stamp = typeof header.timestamp === 'string' && ISO_RE.test(header.timestamp) ? header.timestamp : nowIso()
      const path = fsPath(join(this.#ctx.dirOf(tenant, session.info.cwd), sessionFileName(stamp, session.id)))
      if (this.#storage.existsSync(path)) throw new SessionExists(session.id)
      // SPEC.md §6.2: the session directory is made at once, even for a session with no file yet.
      this.#storage.ensureDirSync(dirname(path))
      const text = textOf(lines, session.torn)
      if (session.saved) await writeAtomically(this.#storage, path, text)
      const row: IndexRow = {
        tenant,
        id: session.id,
        path: this.#ctx.rel(path),
        saved: session.saved,
        version: this.#ctx.nextVersion(),
        modified: session.info.modifiedMs,
        item: session.info,
        recent: '',
        size: Buffer.byteLength(text, 'utf8'),
        checked: Date.now(),
      }
      const prefix = new SessionPrefix(text.slice(0, PREFIX_CHARS), path)
      row.recent = prefix.name()
      this.#index.put(row)
      this.#search.index.replace(tenant, session.id, lines)
      const journal = new JsonlJournal(this.#ctx, row, prefix, session.saved ? undefined : lines, session.torn === true)
      this.#open.set(key, journal)
      return journal
    } finally {
      this.#creating.delete(key)
    }
  }

  async list (tenant: string, query: ListQuery): Promise<ListPage> {
    if (!this.#checked) await this.#reconciled
    return this.#index.list(tenant, query)
  }

  async info (tenant: string, id: string): Promise<ListingItem | undefined> {
    if (!this.#checked) await this.#reconciled
    return this.#index.get(tenant, id)?.item
  }

  async recent (tenant: string, cwd: string, limit: number): Promise<RecentItem[]> {
    if (!this.#checked) await this.#reconciled
    return this.#index.recent(tenant, cwd, limit, false)
  }

  async continueTarget (tenant: string, cwd: string, terminalId?: string): Promise<string | undefined> {
    if (!this.#checked) await this.#reconciled
    if (terminalId !== undefined) {
      const crumb = await readBreadcrumb(this.#storage, tenantRoot(this.#dataDir, tenant), terminalId)
      if (crumb !== null && crumb.cwd === cwd) {
        const rel = this.#ctx.rel(resolve(crumb.sessionFile))
        const row = this.#index.byPath(rel).find((r) => r.tenant === tenant && r.saved)
        if (row !== undefined && this.#storage.existsSync(this.#ctx.abs(row.path))) return row.id
      }
    }
    return this.#index.recent(tenant, cwd, 1, true)[0]?.id
  }

  async setBreadcrumb (tenant: string, terminalId: string, cwd: string, id: string): Promise<void> {
    const row = this.#index.get(tenant, id)
    if (row === undefined) return
    await writeBreadcrumb(this.#storage, tenantRoot(this.#dataDir, tenant), terminalId, cwd, this.#ctx.abs(row.path), this.#log)
  }

  async breadcrumbs (tenant: string): Promise<Breadcrumb[]> {
    const root = tenantRoot(this.#dataDir, tenant)
    const found: Breadcrumb[] = []
    for (const path of this.#storage.listFilesSync(join(root, 'terminal-sessions'), '*')) {
      const terminalId = basename(path)
      if (terminalId.startsWith('.')) continue
      const crumb = await readBreadcrumb(this.#storage, root, terminalId).catch(() => null)
      const row = crumb === null ? undefined : this.#index.byPath(this.#ctx.rel(resolve(crumb.sessionFile))).find((r) => r.tenant === tenant && r.saved)
      if (crumb !== null && row !== undefined) found.push({ terminalId, cwd: crumb.cwd, id: row.id })
    }
    return found
  }

  async tenants (): Promise<string[]> {
    await this.#reconciled
    const names = new Set([...this.#index.tenants(), ...tenantRoots(this.#storage, this.#dataDir).map((r) => r.tenant)])
    return [...names].sort()
  }

  async * refLines (tenant: string): AsyncIterable<string> {
    if (!this.#checked) await this.#reconciled
    yield * refLinesOf({ ...this.#ctx, held: (t, id) => this.#open.get(keyOf(t, id))?.held }, tenant)
  }

  async usage (tenant: string): Promise<SessionUsage> {
    if (!this.#checked) await this.#reconciled
    return this.#index.usage(tenant)
  }

  async runAlone<T> (name: string, work: () => Promise<T>): Promise<AloneOutcome<T>> {
    if (this.#alone.has(name)) return { ran: false }
    this.#alone.add(name)
    try {
      return { ran: true, value: await work() }
    } finally {
      this.#alone.delete(name)
    }
  }

  async search (tenant: string, query: SearchQuery): Promise<SearchPage> {
    if (!this.#checked) await this.#reconciled
    this.#index.flush() // the listing rows a search joins
    return await this.#search.search(tenant, query)
  }

  async reindex (progress: ReindexProgress): Promise<void> {
    await this.#search.reindex(progress)
  }

  follow (): () => void {
    return () => {} // one process owns the files: no other process changes them
  }

  async writable (): Promise<boolean> {
    const probe = join(this.#dataDir, `.readyz-${process.pid}-${++this.#probes}`)
    try {
      await this.#storage.writeText(probe, '')
      await this.#storage.unlink(probe)
      return true
    } catch {
      return false
    }
  }

  /**
   * Stops the check against the files (the next start goes on with it), closes every journal and
   * the index; idempotent.
   */
  async close (): Promise<void> {
    this.#closed ??= this.#close()
    await this.#closed
  }

  async #close (): Promise<void> {
    this.#closing = true
    await this.#reconciled
    const searched = await this.#backfill.idle()
    await this.#search.done
    await Promise.all([...this.#open.values()].map(async (j) => await j.close()))
    // Without the mark the next start looks at every file, so it finds those the backfill left.
    if (this.#complete && searched) this.#index.markClosed(Date.now())
    await this.#search.close()
    this.#index.close()
  }

  #reconcileContext (): ReconcileContext {
    return { ...this.#ctx, dataDir: this.#dataDir, backfill: this.#backfill }
  }

  /** The index row of a saved session whose file exists (followed when an agent moved its directory). */
  async #saved (tenant: string, id: string): Promise<IndexRow | undefined> {
    let row = this.#index.get(tenant, id)
    if (row === undefined && !this.#checked) {
      await this.#reconciled
      row = this.#index.get(tenant, id)
    }
    if (row === undefined || !row.saved) return undefined
    const path = this.#ctx.abs(row.path)
    if (this.#storage.existsSync(path)) return row
    const moved = findMovedSessionFile(this.#storage, tenantRoot(this.#dataDir, tenant), path)
    if (moved === undefined) {
      this.#index.delete(tenant, id)
      this.#search.index.remove(tenant, id)
      return undefined
    }
    row = { ...row, path: this.#ctx.rel(moved) }
    this.#index.put(row)
    return row
  }
}
