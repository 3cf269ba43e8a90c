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
 * (path → kind, size, mtime, plus directories), loaded once by `open` and kept current by this
 * instance's own writes through `#record`, the one place a catalog entry changes (changes made by
 * other instances would come in there too). Directories are implied by files; one made by
 * `ensureDirSync` lives in the catalog only, like the memory storage's. Operations on one path
 * run in call order; `writeTextSync` updates the catalog at once and commits in that order
 * behind it (a failure is thrown by the next operation on the path).
 */
import { relative, resolve, sep } from 'node:path'
import type pg from 'pg'
import { PathOutsideDataDir } from '../../errors.js'
import { fsError, PathTree, pathKey } from '../path-tree.js'
import { isInside } from '../paths.js'
import { SerialWriter, type WriterBackend } from '../serial-writer.js'
import { assertByteCount, decodeUtf8 } from '../storage-helpers.js'
import type { OpenWriterOptions, SessionStorage, SessionStorageWriter, StorageStat } from '../types.js'
import { transaction } from './pool.js'
import { PgSessionLog } from './session-log.js'
import { appendAt, fileBytes, keepsForm, loadStoredFiles, moveAt, placeAt, removeAt, type Stored } from './stored-files.js'

/** What the catalog knows of one file. */
interface CatalogFile {
  stored: Stored
  size: number
  mtimeMs: number
}

export interface PgSessionStorageOptions {
  /** Absolute DATA_DIR: every path is under it, and rows keep paths relative to it. */
  dataDir: string
}

/** Entry lines read per query when a prefix of a session is wanted. */
const PREFIX_PAGE = 64

export class PgSessionStorage implements SessionStorage {
  readonly #pool: pg.Pool
  readonly #dataDir: string
  readonly #log: PgSessionLog
  readonly #tree = new PathTree<CatalogFile>()
  /** Per path key: settles when the last operation queued on it has finished. */
  readonly #tails = new Map<string, Promise<void>>()
  /** Per path key: a `writeTextSync` that failed, thrown by the next operation on the path. */
  readonly #failed = new Map<string, Error>()
  #lastMtimeMs = 0

  private constructor (pool: pg.Pool, options: PgSessionStorageOptions) {
    this.#pool = pool
    this.#dataDir = resolve(options.dataDir)
    this.#log = new PgSessionLog(pool)
  }

  /** The storage over the (migrated) database of `pool`, its catalog loaded. */
  static async open (pool: pg.Pool, options: PgSessionStorageOptions): Promise<PgSessionStorage> {
    const storage = new PgSessionStorage(pool, options)
    for (const f of await loadStoredFiles(pool)) {
      storage.#record(resolve(storage.#dataDir, f.rel), { stored: f.stored, size: f.size, mtimeMs: f.mtimeMs })
    }
    return storage
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
    const provisional = { stored: previous?.stored ?? { kind: 'file' as const }, size: Buffer.byteLength(content, 'utf8'), mtimeMs: this.#tick() }
    this.#record(path, provisional)
    void this.#exclusive([path], async () => {
      try {
        await this.#replace(path, rel, content)
      } catch (err) {
        if (this.#tree.get(path) === provisional) this.#record(path, previous)
        this.#failed.set(pathKey(path), err as Error)
      }
    }).catch((err: unknown) => { this.#failed.set(pathKey(path), err as Error) }) // an earlier failure, kept for the next caller
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
    await this.#settled(path)
    return await this.#text(path, this.#tree.file(path, 'open'))
  }

  async readTextPrefix (path: string, maxBytes: number): Promise<string> {
    assertByteCount(maxBytes)
    await this.#settled(path)
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
    await this.#exclusive([path], async () => { await this.#replace(path, rel, content) })
  }

  /** Replaces `nextPath` in one transaction; the file keeps its mtime. */
  async rename (path: string, nextPath: string): Promise<void> {
    const from = this.#rel(path)
    const to = this.#rel(nextPath)
    await this.#exclusive([path, nextPath], async () => {
      const file = this.#tree.file(path, 'rename')
      this.#tree.assertCanPut(nextPath, 'rename')
      if (from === to) return
      const mtime = new Date(file.mtimeMs)
      // A move that keeps the form only changes the path; any other is stored again at `to`.
      const text = keepsForm(file.stored, to) ? undefined : await this.#text(path, file)
      const stored = await transaction(this.#pool, async (client) => {
        await removeAt(client, to)
        if (text === undefined) {
          await moveAt(client, from, to, file.stored)
          return file.stored
        }
        await removeAt(client, from)
        return await placeAt(client, to, text, mtime)
      })
      this.#record(path, undefined)
      this.#record(nextPath, { ...file, stored })
    })
  }

  async unlink (path: string): Promise<void> {
    const rel = this.#rel(path)
    await this.#exclusive([path], async () => {
      this.#tree.file(path, 'unlink')
      await transaction(this.#pool, async (client) => { await removeAt(client, rel) })
      this.#record(path, undefined)
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
        await this.#exclusive([path], async () => {
          const truncate = !opened && options.flags === 'w'
          opened = true
          if (truncate) await this.#replace(path, rel, line)
          else await this.#append(path, rel, line)
        })
      },
      sync: async () => {
        if (opened) return
        await this.#exclusive([path], async () => {
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
    const stored = await transaction(this.#pool, async (client) => {
      await removeAt(client, rel)
      return await placeAt(client, rel, content, new Date(mtimeMs))
    })
    this.#record(path, { stored, size: Buffer.byteLength(content, 'utf8'), mtimeMs })
  }

  /** Appends `text`; a session that cannot take it as entries is stored again whole, as a plain file. */
  async #append (path: string, rel: string, text: string): Promise<void> {
    this.#tree.assertCanPut(path)
    const file = this.#tree.get(path)
    if (file === undefined || file.size === 0) return await this.#replace(path, rel, text)
    const mtimeMs = this.#tick()
    const appended = await transaction(this.#pool, async (client) => await appendAt(client, rel, file.stored, text, new Date(mtimeMs)))
    if (!appended) return await this.#replace(path, rel, await this.#text(path, file) + text)
    this.#record(path, { stored: file.stored, size: file.size + Buffer.byteLength(text, 'utf8'), mtimeMs })
  }

  async #text (path: string, file: CatalogFile): Promise<string> {
    if (file.stored.kind === 'file') return (await this.#fileBytes(path, this.#rel(path))).toString('utf8')
    return await this.#log.exportJsonl(file.stored.tenant, file.stored.id)
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

  /** Waits for the operations queued on `path`, then throws a failed `writeTextSync` of it. */
  async #settled (path: string): Promise<void> {
    const k = pathKey(path)
    await this.#tails.get(k)
    this.#throwFailed(k)
  }

  #throwFailed (k: string): void {
    const err = this.#failed.get(k)
    if (err === undefined) return
    this.#failed.delete(k)
    throw err
  }

  /** Runs `fn` after every operation queued on any of `paths`, and before any queued later. */
  async #exclusive<T> (paths: string[], fn: () => Promise<T>): Promise<T> {
    const keys = [...new Set(paths.map(pathKey))]
    const before = keys.map((k) => this.#tails.get(k))
    let done!: () => void
    const tail = new Promise<void>((resolve) => { done = resolve })
    for (const k of keys) this.#tails.set(k, tail)
    try {
      await Promise.all(before)
      for (const k of keys) this.#throwFailed(k)
      return await fn()
    } finally {
      done()
      for (const k of keys) if (this.#tails.get(k) === tail) this.#tails.delete(k)
    }
  }
}
