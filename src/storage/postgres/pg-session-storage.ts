/**
 * `SessionStorage` in PostgreSQL (`STORAGE=postgres`). Paths stay the ones the registry uses
 * under DATA_DIR; rows keep them relative to DATA_DIR (stored-files.ts), so a server started on
 * the same database with another, even empty, DATA_DIR serves the same sessions. A session file
 * is its session row and entry rows, each line kept exactly; other files are plain rows.
 *
 * Commit points: every `writeLine` of a writer is one transaction, so a group of appends the
 * manager writes with one call shares one commit, and `fsync` (which waits for the writes before
 * it) resolves only once they are committed. A rewrite (temp file, `rename` onto the session)
 * replaces the session in the one transaction of the rename.
 *
 * The synchronous calls cannot query the database: they are answered from an in-process catalog
 * (path → kind, size, mtime, version, plus directories), loaded once by `open` and kept current
 * through its `record` (pg-catalog.ts), the one place a catalog entry changes: by this server's own writes, and
 * (with `listenUrl`) by the changes of other servers on the database (catalog-feed.ts).
 *
 * Several servers on one database: each process has one reader-writer per session file (the
 * registry's manager). `track` records the version stored when it starts reading the file, and
 * its own writes move that version on; an append or a rename onto the file checks, in its
 * transaction, that the stored version is still that one, and otherwise fails with `ESTALE`
 * (`StaleFile`), changing nothing: the caller reloads the file and tries again (pg-file-writes.ts).
 * Directories are implied by files; one made by `ensureDirSync` lives in the catalog only, like
 * the memory storage's. Operations on one path run in call order; `writeTextSync` updates the
 * catalog at once and commits in that order behind it (a failure is thrown by the next operation on the path).
 */
import type pg from 'pg'
import type { Logger } from '../../session/logger.js'
import { SerialWriter, type WriterBackend } from '../serial-writer.js'
import { assertByteCount } from '../storage-helpers.js'
import type { OpenWriterOptions, SessionStorage, SessionStorageWriter, StorageStat } from '../types.js'
import { CatalogFeed } from './catalog-feed.js'
import { PathQueues } from './path-queues.js'
import { catalogFile, PgCatalog } from './pg-catalog.js'
import { fileText, fileTextChunks, fileTextPrefix } from './pg-file-reads.js'
import { PgFileWrites } from './pg-file-writes.js'
import { PgReplayStore } from './replays.js'
import { PgSessionLog } from './session-log.js'
import { loadStoredFile, loadStoredFiles, readEntriesAfter, sessionPath, sessionPaths, storedVersion, type Stored } from './stored-files.js'
import { PgUnsavedSessions } from './unsaved-sessions.js'

export interface PgSessionStorageOptions {
  /** Absolute DATA_DIR: every path is under it, and rows keep paths relative to it. */
  dataDir: string
  /** The database's URL: when given, the catalog follows the changes of other servers (catalog-feed.ts). */
  listenUrl?: string
  /** Milliseconds between full comparisons of the catalog with the database (default 5000). */
  resyncMs?: number
  logger?: Logger
}

export class PgSessionStorage implements SessionStorage {
  readonly #pool: pg.Pool
  readonly #log: PgSessionLog
  /** The catalog of files and the versions this process holds (pg-catalog.ts). */
  readonly #catalog: PgCatalog
  readonly #writes: PgFileWrites
  /** Operations on one path in call order; a failed `writeTextSync` is thrown by the next one. */
  readonly #queues = new PathQueues()
  readonly #watchers = new Set<(path: string) => void>()
  #feed: CatalogFeed | undefined
  /** Sessions with no file yet, as rows (unsaved-sessions.ts); storing a file claims one. */
  readonly unsaved: PgUnsavedSessions
  readonly replays: PgReplayStore

  private constructor (pool: pg.Pool, options: PgSessionStorageOptions) {
    this.#pool = pool
    this.#log = new PgSessionLog(pool)
    const catalog = this.#catalog = new PgCatalog(options.dataDir)
    const rel = (path: string): string => catalog.rel(path)
    this.replays = new PgReplayStore(pool, rel)
    this.unsaved = new PgUnsavedSessions(pool, this.#queues, { rel, abs: (r) => catalog.abs(r) }, this.replays)
    this.#writes = new PgFileWrites(pool, catalog, this.unsaved, this.replays)
  }

  /** The storage over the (migrated) database of `pool`, its catalog loaded (and followed, with `listenUrl`). */
  static async open (pool: pg.Pool, options: PgSessionStorageOptions): Promise<PgSessionStorage> {
    const storage = new PgSessionStorage(pool, options)
    if (options.listenUrl !== undefined) {
      storage.#feed = new CatalogFeed({
        url: options.listenUrl,
        pool,
        resyncMs: options.resyncMs,
        logger: options.logger,
        known: (rel) => storage.#catalog.tree.get(storage.#catalog.abs(rel))?.version,
        knownPaths: () => storage.#catalog.knownPaths(),
        refresh: async (rel, version) => { await storage.#refresh(rel, version) },
      })
      await storage.#feed.start() // before the catalog is read: nothing committed after the read is missed
      await storage.unsaved.listen(options.listenUrl, options.logger)
    }
    for (const f of await loadStoredFiles(pool)) storage.#catalog.record(storage.#catalog.abs(f.rel), catalogFile(f))
    return storage
  }

  /** Stops following other servers' changes. */
  async close (): Promise<void> {
    await this.#feed?.close()
    await this.unsaved.close()
  }

  /**
   * Records the version stored at `path` now as the one this process's reader-writer of it
   * holds: call it before reading the file to load it. Its appends and renames onto it then
   * fail with `ESTALE` once another server changed the file.
   */
  async track (path: string): Promise<void> {
    const rel = this.#rel(path)
    await this.#queues.settled(path)
    this.#catalog.hold(path, await storedVersion(this.#pool, rel))
  }

  /** False when the file at `path` changed since this process last read (`track`) or wrote it. */
  async isCurrent (path: string): Promise<boolean> {
    if (this.#catalog.held(path) === undefined) return true
    await this.#queues.settled(path).catch(() => {})
    const now = await storedVersion(this.#pool, this.#rel(path))
    return now?.version === this.#catalog.held(path)?.version
  }

  /** The row generation this process holds of `path` (a rewrite makes a new one), if tracked. */
  generation (path: string): number | undefined {
    return this.#catalog.held(path)?.born
  }

  /**
   * The entry lines after the first `lines` lines (header included) of the session at `path`,
   * when its row is still the one this process holds (only appended to); undefined otherwise.
   */
  async readLinesAfter (path: string, lines: number): Promise<string | undefined> {
    const rel = this.#rel(path)
    return await this.#queues.exclusive([path], async () => {
      const held = this.#catalog.held(path)
      if (held === undefined || lines < 1) return undefined
      const read = await readEntriesAfter(this.#pool, rel, lines - 1)
      if (read === undefined || read.born !== held.born) return undefined
      this.#catalog.hold(path, read)
      return read.text
    }, false)
  }

  /** Re-reads every file whose stored version differs from the catalog's. */
  async sync (): Promise<void> {
    await this.#feed?.resync()
  }

  /** The paths of the session files of id `id` (any tenant), re-read into the catalog. */
  async locate (id: string): Promise<string[]> {
    const rels = await sessionPaths(this.#pool, id)
    await Promise.all(rels.map(async (rel) => { await this.#refresh(rel) }))
    return rels.map((rel) => this.#catalog.abs(rel))
  }

  /** Calls `listener` with each path another server changed, once the catalog has the change. */
  watch (listener: (path: string) => void): () => void {
    this.#watchers.add(listener)
    return () => { this.#watchers.delete(listener) }
  }

  ensureDirSync (dir: string): void {
    this.#catalog.tree.addDirs(dir)
  }

  existsSync (path: string): boolean {
    return this.#catalog.tree.exists(path)
  }

  writeTextSync (path: string, content: string): void {
    const rel = this.#rel(path)
    const catalog = this.#catalog
    catalog.tree.assertCanPut(path)
    const previous = catalog.tree.get(path)
    const provisional = {
      stored: previous?.stored ?? { kind: 'file' as const }, size: Buffer.byteLength(content, 'utf8'), mtimeMs: catalog.tick(), version: -1, born: -1, entries: 0,
    }
    catalog.record(path, provisional)
    void this.#queues.exclusive([path], async () => {
      try {
        await this.#writes.replace(path, rel, content)
      } catch (err) {
        if (catalog.tree.get(path) === provisional) catalog.record(path, previous)
        this.#queues.fail(path, err as Error)
      }
    }).catch((err: unknown) => { this.#queues.fail(path, err as Error) }) // an earlier failure, kept for the next caller
  }

  statSync (path: string): StorageStat {
    const { size, mtimeMs } = this.#catalog.tree.file(path, 'stat')
    return { size, mtimeMs, mtime: new Date(mtimeMs) }
  }

  listFilesSync (dir: string, pattern: string): string[] {
    return this.#catalog.tree.listFiles(dir, pattern)
  }

  listDirsSync (dir: string): string[] {
    return this.#catalog.tree.listDirs(dir)
  }

  async exists (path: string): Promise<boolean> {
    return this.existsSync(path)
  }

  async readText (path: string): Promise<string> {
    await this.#queues.settled(path)
    return await fileText(this.#pool, path, this.#rel(path), this.#catalog.tree.file(path, 'open'))
  }

  /**
   * The file in pieces (`readText` joined): a session's rows a page per query in one snapshot,
   * handed on while the next page is read (session-text.ts).
   */
  async * readTextChunks (path: string): AsyncIterable<string> {
    await this.#queues.settled(path)
    yield * fileTextChunks(this.#pool, path, this.#rel(path), this.#catalog.tree.file(path, 'open'))
  }

  async readTextPrefix (path: string, maxBytes: number): Promise<string> {
    assertByteCount(maxBytes)
    await this.#queues.settled(path)
    const file = this.#catalog.tree.file(path, 'open')
    return await fileTextPrefix(this.#pool, this.#log, path, this.#rel(path), file, maxBytes)
  }

  async writeText (path: string, content: string): Promise<void> {
    const rel = this.#rel(path)
    await this.#queues.exclusive([path], async () => { await this.#writes.replace(path, rel, content) })
  }

  /** Replaces `nextPath` in one transaction; the file keeps its mtime. */
  async rename (path: string, nextPath: string): Promise<void> {
    const from = this.#rel(path)
    const to = this.#rel(nextPath)
    await this.#queues.exclusive([path, nextPath], async () => { await this.#writes.rename(path, nextPath, from, to) })
  }

  async unlink (path: string): Promise<void> {
    const rel = this.#rel(path)
    await this.#queues.exclusive([path], async () => { await this.#writes.unlink(path, rel) })
  }

  /**
   * A writer on `path`: its first `writeLine` or `fsync` opens it (`"w"` replaces the file, `"a"`
   * creates it when missing); each `writeLine` commits; `fsync` waits for them.
   */
  openWriter (path: string, options: OpenWriterOptions): SessionStorageWriter {
    const rel = this.#rel(path)
    let opened = false
    const backend: WriterBackend = {
      write: async (line) => {
        await this.#queues.exclusive([path], async () => {
          const truncate = !opened && options.flags === 'w'
          opened = true
          if (truncate) await this.#writes.replace(path, rel, line)
          else await this.#writes.append(path, rel, line)
        })
      },
      sync: async () => {
        if (opened) return
        await this.#queues.exclusive([path], async () => {
          opened = true
          this.#catalog.tree.assertCanPut(path)
          if (options.flags === 'w' || this.#catalog.tree.get(path) === undefined) await this.#writes.replace(path, rel, '')
        })
      },
      release: async () => {},
    }
    return new SerialWriter(backend, options.onError)
  }

  /** Nothing to sync: a commit is durable. */
  async syncDir (_dir: string): Promise<void> {}

  /**
   * Re-reads the file at `rel` (another server changed it) and tells the watchers. A session
   * that left `rel` for another path (a move) is first re-read there, so that watchers told it
   * is gone from `rel` find it where it went. `notified`, the version a notification announced:
   * nothing is read when the catalog has it by the time the operations queued on `rel` are done
   * (this server's own commit, whose notification can come before its answer).
   */
  async #refresh (rel: string, notified?: number): Promise<void> {
    const path = this.#catalog.abs(rel)
    let left: Stored | undefined
    const changed = await this.#queues.exclusive([path], async () => {
      const known = this.#catalog.tree.get(path)
      if (notified !== undefined && known !== undefined && known.version >= notified) return false
      const fresh = await loadStoredFile(this.#pool, rel, known === undefined ? undefined : { rel, ...known })
      if (fresh?.version === known?.version) return false
      if (fresh === undefined) left = known?.stored
      this.#catalog.record(path, fresh === undefined ? undefined : catalogFile(fresh))
      return true
    }, false)
    if (left?.kind === 'session') {
      const now = await sessionPath(this.#pool, left.tenant, left.id)
      if (now !== undefined && now !== rel) await this.#refresh(now)
    }
    if (changed) for (const watcher of [...this.#watchers]) watcher(path)
  }

  /** `path` relative to DATA_DIR, `/`-separated. @throws PathOutsideDataDir */
  #rel (path: string): string {
    return this.#catalog.rel(path)
  }
}
