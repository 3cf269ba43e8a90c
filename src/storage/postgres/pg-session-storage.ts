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
 * through `#record`, the one place a catalog entry changes: by this server's own writes, and
 * (with `listenUrl`) by the changes of other servers on the database (catalog-feed.ts).
 *
 * Several servers on one database: each process has one reader-writer per session file (the
 * registry's manager). `track` records the version stored when it starts reading the file, and
 * its own writes move that version on; an append or a rename onto the file checks, in its
 * transaction, that the stored version is still that one, and otherwise fails with `ESTALE`
 * (`StaleFile`), changing nothing: the caller reloads the file and tries again.
 * Directories are implied by files; one made by
 * `ensureDirSync` lives in the catalog only, like the memory storage's. Operations on one path
 * run in call order; `writeTextSync` updates the catalog at once and commits in that order
 * behind it (a failure is thrown by the next operation on the path).
 */
import { relative, resolve, sep } from 'node:path'
import type pg from 'pg'
import { hasCode, PathOutsideDataDir } from '../../errors.js'
import type { Logger } from '../../session/logger.js'
import { fsError, PathTree, pathKey } from '../path-tree.js'
import { isInside } from '../paths.js'
import { SerialWriter, type WriterBackend } from '../serial-writer.js'
import { assertByteCount, decodeUtf8 } from '../storage-helpers.js'
import type { OpenWriterOptions, SessionStorage, SessionStorageWriter, StorageStat } from '../types.js'
import { CatalogFeed } from './catalog-feed.js'
import { transaction } from './pool.js'
import { PathQueues } from './path-queues.js'
import { AppendGroups } from './append-groups.js'
import { PgReplayStore } from './replays.js'
import { entryLines } from './session-form.js'
import { PgSessionLog } from './session-log.js'
import { sessionText, sessionTextChunks } from './session-text.js'
import {
  appendToFile, assertVersionAt, fileBytes, keepsForm, loadStoredFile, loadStoredFiles, moveAt, placeAt, readEntriesAfter, removeAt, sessionPath, sessionPaths, storedVersion,
  type Stored, type StoredFile, type Versioned,
} from './stored-files.js'
import { PgUnsavedSessions } from './unsaved-sessions.js'

/** What the catalog knows of one file (`version` -1: a `writeTextSync` not committed yet). */
type CatalogFile = Omit<StoredFile, 'rel'>

export interface PgSessionStorageOptions {
  /** Absolute DATA_DIR: every path is under it, and rows keep paths relative to it. */
  dataDir: string
  /** The database's URL: when given, the catalog follows the changes of other servers (catalog-feed.ts). */
  listenUrl?: string
  /** Milliseconds between full comparisons of the catalog with the database (default 5000). */
  resyncMs?: number
  logger?: Logger
}

/** Entry rows of `text` stored as `stored`: its lines after the header. */
function entryCount (stored: Stored, text: string): number {
  return stored.kind === 'session' ? Math.max(0, text.split('\n').length - 2) : 0
}

function catalogFile (f: StoredFile): CatalogFile {
  return { stored: f.stored, size: f.size, mtimeMs: f.mtimeMs, version: f.version, born: f.born, entries: f.entries }
}

/** A session deleted under a read (SS_SESSION_NOT_FOUND) as a file reader sees it: ENOENT. */
function missingAsEnoent (err: unknown, path: string): unknown {
  return hasCode(err, 'SS_SESSION_NOT_FOUND') ? fsError('ENOENT', 'open', path) : err
}

/** Entry lines read per query when a prefix of a session is wanted. */
const PREFIX_PAGE = 64

export class PgSessionStorage implements SessionStorage {
  readonly #pool: pg.Pool
  readonly #dataDir: string
  readonly #log: PgSessionLog
  /** Appends to sessions, committed in groups across sessions. */
  readonly #groups: AppendGroups
  readonly #tree = new PathTree<CatalogFile>()
  /** Operations on one path in call order; a failed `writeTextSync` is thrown by the next one. */
  readonly #queues = new PathQueues()
  /** Per path key: the version this process's reader-writer of the file holds (see `track`). */
  readonly #held = new Map<string, Versioned>()
  readonly #watchers = new Set<(path: string) => void>()
  #feed: CatalogFeed | undefined
  #lastMtimeMs = 0
  /** Sessions with no file yet, as rows (unsaved-sessions.ts); storing a file claims one. */
  readonly unsaved: PgUnsavedSessions
  readonly replays: PgReplayStore

  private constructor (pool: pg.Pool, options: PgSessionStorageOptions) {
    this.#pool = pool
    this.#dataDir = resolve(options.dataDir)
    this.#log = new PgSessionLog(pool)
    const rel = (path: string): string => this.#rel(path)
    this.unsaved = new PgUnsavedSessions(pool, this.#queues, { rel, abs: (r) => resolve(this.#dataDir, r) })
    this.replays = new PgReplayStore(pool, rel)
    this.#groups = new AppendGroups(pool)
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
        known: (rel) => storage.#tree.get(resolve(storage.#dataDir, rel))?.version,
        knownPaths: () => storage.#knownPaths(),
        refresh: async (rel, version) => { await storage.#refresh(rel, version) },
      })
      await storage.#feed.start() // before the catalog is read: nothing committed after the read is missed
      await storage.unsaved.listen(options.listenUrl, options.logger)
    }
    for (const f of await loadStoredFiles(pool)) storage.#record(resolve(storage.#dataDir, f.rel), catalogFile(f))
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
    const now = await storedVersion(this.#pool, rel)
    if (now === undefined) this.#held.delete(pathKey(path))
    else this.#held.set(pathKey(path), now)
  }

  /** False when the file at `path` changed since this process last read (`track`) or wrote it. */
  async isCurrent (path: string): Promise<boolean> {
    const held = this.#held.get(pathKey(path))
    if (held === undefined) return true
    await this.#queues.settled(path).catch(() => {})
    const now = await storedVersion(this.#pool, this.#rel(path))
    return now?.version === this.#held.get(pathKey(path))?.version
  }

  /** The row generation this process holds of `path` (a rewrite makes a new one), if tracked. */
  generation (path: string): number | undefined {
    return this.#held.get(pathKey(path))?.born
  }

  /**
   * The entry lines after the first `lines` lines (header included) of the session at `path`,
   * when its row is still the one this process holds (only appended to); undefined otherwise.
   */
  async readLinesAfter (path: string, lines: number): Promise<string | undefined> {
    const rel = this.#rel(path)
    return await this.#queues.exclusive([path], async () => {
      const held = this.#held.get(pathKey(path))
      if (held === undefined || lines < 1) return undefined
      const read = await readEntriesAfter(this.#pool, rel, lines - 1)
      if (read === undefined || read.born !== held.born) return undefined
      this.#hold(path, read)
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
    return rels.map((rel) => resolve(this.#dataDir, rel))
  }

  /** Calls `listener` with each path another server changed, once the catalog has the change. */
  watch (listener: (path: string) => void): () => void {
    this.#watchers.add(listener)
    return () => { this.#watchers.delete(listener) }
  }

  ensureDirSync (dir: string): void {
    this.#tree.addDirs(dir)
  }

  existsSync (path: string): boolean {
    return this.#tree.exists(path)
  }

  writeTextSync (path: string, content: string): void {
    const rel = this.#rel(path)
    this.#tree.assertCanPut(path)
    const previous = this.#tree.get(path)
    const provisional = {
      stored: previous?.stored ?? { kind: 'file' as const }, size: Buffer.byteLength(content, 'utf8'), mtimeMs: this.#tick(), version: -1, born: -1, entries: 0,
    }
    this.#record(path, provisional)
    void this.#queues.exclusive([path], async () => {
      try {
        await this.#replace(path, rel, content)
      } catch (err) {
        if (this.#tree.get(path) === provisional) this.#record(path, previous)
        this.#queues.fail(path, err as Error)
      }
    }).catch((err: unknown) => { this.#queues.fail(path, err as Error) }) // an earlier failure, kept for the next caller
  }

  statSync (path: string): StorageStat {
    const { size, mtimeMs } = this.#tree.file(path, 'stat')
    return { size, mtimeMs, mtime: new Date(mtimeMs) }
  }

  listFilesSync (dir: string, pattern: string): string[] {
    return this.#tree.listFiles(dir, pattern)
  }

  listDirsSync (dir: string): string[] {
    return this.#tree.listDirs(dir)
  }

  async exists (path: string): Promise<boolean> {
    return this.existsSync(path)
  }

  async readText (path: string): Promise<string> {
    await this.#queues.settled(path)
    return await this.#text(path, this.#tree.file(path, 'open'))
  }

  /**
   * The file in pieces (`readText` joined): a session's rows a page per query in one snapshot,
   * handed on while the next page is read (session-text.ts).
   */
  async * readTextChunks (path: string): AsyncIterable<string> {
    await this.#queues.settled(path)
    const file = this.#tree.file(path, 'open')
    if (file.stored.kind === 'file') {
      yield (await this.#fileBytes(path, this.#rel(path))).toString('utf8')
      return
    }
    try {
      yield * sessionTextChunks(this.#pool, file.stored.tenant, file.stored.id)
    } catch (err) {
      throw missingAsEnoent(err, path)
    }
  }

  async readTextPrefix (path: string, maxBytes: number): Promise<string> {
    assertByteCount(maxBytes)
    await this.#queues.settled(path)
    const file = this.#tree.file(path, 'open')
    const rel = this.#rel(path)
    if (file.stored.kind === 'file') return decodeUtf8(await this.#fileBytes(path, rel, maxBytes))
    const { tenant, id } = file.stored
    const state = await this.#log.state(tenant, id)
    if (state === undefined) throw fsError('ENOENT', 'open', path)
    const parts = [state.header, '\n']
    let bytes = Buffer.byteLength(state.header, 'utf8') + 1
    for (let after = 0; bytes < maxBytes;) {
      const page = await this.#log.read(tenant, id, after, PREFIX_PAGE)
      for (const e of page) {
        parts.push(e.line, '\n')
        bytes += Buffer.byteLength(e.line, 'utf8') + 1
        after = e.seq
      }
      if (page.length < PREFIX_PAGE) break
    }
    return decodeUtf8(Buffer.from(parts.join(''), 'utf8').subarray(0, maxBytes))
  }

  async writeText (path: string, content: string): Promise<void> {
    const rel = this.#rel(path)
    await this.#queues.exclusive([path], async () => { await this.#replace(path, rel, content) })
  }

  /** Replaces `nextPath` in one transaction; the file keeps its mtime. */
  async rename (path: string, nextPath: string): Promise<void> {
    const from = this.#rel(path)
    const to = this.#rel(nextPath)
    await this.#queues.exclusive([path, nextPath], async () => {
      const file = this.#tree.file(path, 'rename')
      this.#tree.assertCanPut(nextPath, 'rename')
      if (from === to) return
      const mtime = new Date(file.mtimeMs)
      // A move that keeps the form only changes the path; any other is stored again at `to`.
      const text = keepsForm(file.stored, to) ? undefined : await this.#text(path, file)
      // Neither end may have changed since this process read or wrote it.
      const heldFrom = this.#held.get(pathKey(path))
      const held = this.#held.get(pathKey(nextPath))
      const placed = await transaction(this.#pool, async (client) => {
        if (heldFrom !== undefined) await assertVersionAt(client, from, heldFrom.version)
        if (held !== undefined) await assertVersionAt(client, to, held.version)
        await removeAt(client, to)
        if (text === undefined) return { stored: file.stored, ...await moveAt(client, from, to, file.stored) }
        await removeAt(client, from)
        await this.unsaved.claim(client, nextPath, text)
        return await placeAt(client, to, text, mtime)
      })
      this.#record(path, undefined)
      this.#record(nextPath, { ...file, ...placed, entries: text === undefined ? file.entries : entryCount(placed.stored, text) })
      this.#hold(path, undefined)
      this.#hold(nextPath, placed)
    })
  }

  async unlink (path: string): Promise<void> {
    const rel = this.#rel(path)
    await this.#queues.exclusive([path], async () => {
      this.#tree.file(path, 'unlink')
      await transaction(this.#pool, async (client) => { await removeAt(client, rel) })
      this.#record(path, undefined)
      this.#hold(path, undefined)
    })
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
          if (truncate) await this.#replace(path, rel, line)
          else await this.#append(path, rel, line)
        })
      },
      sync: async () => {
        if (opened) return
        await this.#queues.exclusive([path], async () => {
          opened = true
          this.#tree.assertCanPut(path)
          if (options.flags === 'w' || this.#tree.get(path) === undefined) await this.#replace(path, rel, '')
        })
      },
      release: async () => {},
    }
    return new SerialWriter(backend, options.onError)
  }

  /** Nothing to sync: a commit is durable. */
  async syncDir (_dir: string): Promise<void> {}

  /** Stores `content` as the whole file at `path`. */
  async #replace (path: string, rel: string, content: string): Promise<void> {
    this.#tree.assertCanPut(path)
    const mtimeMs = this.#tick()
    const placed = await transaction(this.#pool, async (client) => {
      await this.unsaved.claim(client, path, content)
      await removeAt(client, rel)
      return await placeAt(client, rel, content, new Date(mtimeMs))
    })
    this.#record(path, { ...placed, size: Buffer.byteLength(content, 'utf8'), mtimeMs, entries: entryCount(placed.stored, content) })
    this.#hold(path, placed)
  }

  /**
   * Appends `text`; a session that cannot take it as entries is stored again whole, as a plain
   * file. @throws StaleFile when another server changed the session since this process held it
   */
  async #append (path: string, rel: string, text: string): Promise<void> {
    this.#tree.assertCanPut(path)
    const file = this.#tree.get(path)
    if (file === undefined || file.size === 0) return await this.#replace(path, rel, text)
    const mtimeMs = this.#tick()
    const mtime = new Date(mtimeMs)
    let appended: Versioned
    let lines = 0
    if (file.stored.kind === 'file') appended = await transaction(this.#pool, async (client) => await appendToFile(client, rel, text, mtime))
    else {
      const entries = entryLines(text)
      const expect = this.#held.get(pathKey(path))?.version
      const result = entries === undefined
        ? 'duplicate'
        : await this.#groups.append({ rel, tenant: file.stored.tenant, id: file.stored.id, entries, mtime, expect })
      if (result === 'duplicate' || entries === undefined) return await this.#replace(path, rel, await this.#text(path, file) + text)
      appended = result
      lines = entries.length
    }
    this.#record(path, { ...file, ...appended, size: file.size + Buffer.byteLength(text, 'utf8'), mtimeMs, entries: file.entries + lines })
    this.#hold(path, appended)
  }

  /**
   * Re-reads the file at `rel` (another server changed it) and tells the watchers. A session
   * that left `rel` for another path (a move) is first re-read there, so that watchers told it
   * is gone from `rel` find it where it went. `notified`, the version a notification announced:
   * nothing is read when the catalog has it by the time the operations queued on `rel` are done
   * (this server's own commit, whose notification can come before its answer).
   */
  async #refresh (rel: string, notified?: number): Promise<void> {
    const path = resolve(this.#dataDir, rel)
    let left: Stored | undefined
    const changed = await this.#queues.exclusive([path], async () => {
      const known = this.#tree.get(path)
      if (notified !== undefined && known !== undefined && known.version >= notified) return false
      const fresh = await loadStoredFile(this.#pool, rel, known === undefined ? undefined : { rel, ...known })
      if (fresh?.version === known?.version) return false
      if (fresh === undefined) left = known?.stored
      this.#record(path, fresh === undefined ? undefined : catalogFile(fresh))
      return true
    }, false)
    if (left?.kind === 'session') {
      const now = await sessionPath(this.#pool, left.tenant, left.id)
      if (now !== undefined && now !== rel) await this.#refresh(now)
    }
    if (changed) for (const watcher of [...this.#watchers]) watcher(path)
  }

  /** DATA_DIR-relative paths of every committed file of the catalog. */
  * #knownPaths (): Iterable<string> {
    for (const [path, file] of this.#tree.files()) if (file.version >= 0) yield this.#rel(path)
  }

  /** Sets (undefined: forgets) the version this process holds of `path`. */
  #hold (path: string, versioned: Versioned | undefined): void {
    if (versioned === undefined) this.#held.delete(pathKey(path))
    else this.#held.set(pathKey(path), { version: versioned.version, born: versioned.born })
  }

  async #text (path: string, file: CatalogFile): Promise<string> {
    if (file.stored.kind === 'file') return (await this.#fileBytes(path, this.#rel(path))).toString('utf8')
    try {
      return await sessionText(this.#pool, file.stored.tenant, file.stored.id)
    } catch (err) {
      throw missingAsEnoent(err, path)
    }
  }

  async #fileBytes (path: string, rel: string, maxBytes?: number): Promise<Buffer> {
    const bytes = await fileBytes(this.#pool, rel, maxBytes)
    if (bytes === undefined) throw fsError('ENOENT', 'open', path)
    return bytes
  }

  /**
   * The one place the catalog changes: `file` is now at `path` (undefined: nothing is). A change
   * committed by another instance is applied here as well.
   */
  #record (path: string, file: CatalogFile | undefined): void {
    if (file === undefined) {
      this.#tree.delete(path)
      return
    }
    this.#tree.set(path, file)
    this.#lastMtimeMs = Math.max(this.#lastMtimeMs, file.mtimeMs)
  }

  /** `path` relative to DATA_DIR, `/`-separated. @throws PathOutsideDataDir */
  #rel (path: string): string {
    if (!isInside(this.#dataDir, path)) throw new PathOutsideDataDir(path)
    return relative(this.#dataDir, resolve(path)).split(sep).join('/')
  }

  /** `max(Date.now(), last + 1)`: mtimes strictly increase, so "newest" is deterministic. */
  #tick (): number {
    this.#lastMtimeMs = Math.max(Date.now(), this.#lastMtimeMs + 1)
    return this.#lastMtimeMs
  }
}
