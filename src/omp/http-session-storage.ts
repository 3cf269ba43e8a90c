/**
 * `HttpSessionStorageBackend`: oh-my-pi's `SessionStorageBackend` (the interface its Redis and
 * SQL storages implement, `@oh-my-pi/pi-coding-agent/session/indexed-session-storage`) over the
 * session-store HTTP API. A path `<dir>/<fileTs>_<id>.jsonl` is session `<id>`; the file's bytes
 * are the session's stored bytes:
 * - `writeFull` stores the whole file (`PUT /v1/sessions/{id}/file`); its `expectedSize`
 *   compare-and-swap is `If-Match` (the etag of the version of that size) or, for a file that
 *   must not exist, `If-None-Match: *`; a `412` is a `SessionWriteConflictError`;
 * - `append` sends the line as records with their ids (`POST records`), idempotently;
 * - the blobs the lines refer to are uploaded from `blobsDir` first, and fetched into it when a
 *   file is read, so that the agent's own blob store resolves them.
 * It uses the global `fetch` (Bun and Node) and loads nothing of the server.
 */
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { OmpHttp, SessionWriteConflictError, type OmpHttpOptions } from './omp-http.js'
import { blobHashes, headerIdOf, idOfPath, projectDirName, sessionFileName } from './session-paths.js'
import { overlayTitleLine, type TitleUpdate } from './title-line.js'

/** One entry of `loadIndex` (oh-my-pi's `SessionStorageIndexEntry`). */
export interface SessionIndexEntry {
  path: string
  size: number
  mtimeMs: number
  title?: string
  titleSource?: 'auto' | 'user'
  titleUpdatedAt?: string
}

export interface HttpSessionStorageOptions extends OmpHttpOptions {
  /** oh-my-pi's session directory (`~/.omp/agent/sessions`): the server's sessions are listed below it. */
  sessionsDir: string
  /** oh-my-pi's blob directory (`~/.omp/agent/blobs`); default `<sessionsDir>/../blobs`. */
  blobsDir?: string
}

/** What the server holds of a path, as this process last saw it. */
interface Known { id: string, etag: string, size: number }

const bytesOf = (text: string): number => Buffer.byteLength(text, 'utf8')

export class HttpSessionStorageBackend {
  readonly #http: OmpHttp
  readonly #sessionsDir: string
  readonly #blobsDir: string
  readonly #known = new Map<string, Known>()
  /** A file being written before it has a header (after a truncate): kept here until it has one. */
  readonly #pending = new Map<string, string>()
  /** Paths that are no session files (not `<fileTs>_<id>.jsonl`), kept in this process. */
  readonly #local = new Map<string, string>()
  readonly #sentBlobs = new Set<string>()

  constructor (options: HttpSessionStorageOptions) {
    this.#http = new OmpHttp(options)
    this.#sessionsDir = options.sessionsDir
    this.#blobsDir = options.blobsDir ?? join(options.sessionsDir, '..', 'blobs')
  }

  async init (): Promise<void> {
    await mkdir(this.#blobsDir, { recursive: true })
  }

  /** Every session of the server, at the path oh-my-pi files it under, with its stored size. */
  async loadIndex (): Promise<SessionIndexEntry[]> {
    const out: SessionIndexEntry[] = []
    for (const info of await this.#http.listAll()) {
      const head = await this.#http.head(info.id)
      if (head === undefined) continue
      const path = join(this.#sessionsDir, projectDirName(info.cwd, homedir(), tmpdir()), sessionFileName(info.created, info.id))
      this.#known.set(path, { id: info.id, ...head })
      out.push({ path, size: head.size, mtimeMs: Date.parse(info.modified) })
    }
    return out
  }

  async readFull (path: string): Promise<string | null> {
    const id = idOfPath(path)
    if (id === undefined) return this.#local.get(path) ?? null
    const pending = this.#pending.get(path)
    if (pending !== undefined) return pending
    const stored = await this.#http.export(id)
    if (stored === undefined) return null
    this.#known.set(path, { id, etag: stored.etag, size: bytesOf(stored.text) })
    await this.#fetchBlobs(stored.text)
    return stored.text
  }

  async readSlices (path: string, prefixBytes: number, suffixBytes: number): Promise<[string, string]> {
    const bytes = Buffer.from(await this.readFull(path) ?? '', 'utf8')
    return [bytes.subarray(0, prefixBytes).toString('utf8'), bytes.subarray(Math.max(0, bytes.length - suffixBytes)).toString('utf8')]
  }

  async writeFull (path: string, content: string, _mtimeMs: number, _title?: TitleUpdate, expectedSize?: number | null): Promise<void> {
    const id = idOfPath(path)
    if (id === undefined) {
      this.#local.set(path, content)
      return
    }
    const conditions = await this.#conditions(path, id, expectedSize)
    if (headerIdOf(content) === undefined) {
      // No header yet (an emptied file): it reaches the server once it has one.
      this.#pending.set(path, content)
      return
    }
    await this.#store(path, id, content, conditions, expectedSize)
  }

  async append (path: string, line: string, _mtimeMs: number): Promise<void> {
    const id = idOfPath(path)
    if (id === undefined) {
      this.#local.set(path, (this.#local.get(path) ?? '') + line)
      return
    }
    const pending = this.#pending.get(path)
    if (pending !== undefined) {
      const text = pending + line
      if (headerIdOf(text) === undefined) this.#pending.set(path, text)
      else await this.#store(path, id, text, {}, undefined)
      return
    }
    await this.#sendBlobs(line)
    const records = line.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
    const etag = await this.#http.appendRecords(id, records)
    const known = this.#known.get(path)
    this.#known.set(path, { id, etag, size: (known?.size ?? 0) + bytesOf(line) })
  }

  /** Rewrites the title line at the start of the file (fixed width, as oh-my-pi does), under `If-Match`. */
  async updateSessionTitle (path: string, title: TitleUpdate, _mtimeMs: number): Promise<void> {
    const id = idOfPath(path)
    const current = await this.readFull(path)
    if (current === null) throw Object.assign(new Error(`ENOENT: no such file, '${path}'`), { code: 'ENOENT' })
    if (id === undefined) {
      this.#local.set(path, overlayTitleLine(current, title))
      return
    }
    const known = this.#known.get(path)!
    await this.#store(path, id, overlayTitleLine(current, title), { 'if-match': known.etag }, known.size)
  }

  async truncate (path: string, _mtimeMs: number): Promise<void> {
    if (idOfPath(path) === undefined) this.#local.set(path, '')
    else this.#pending.set(path, '')
  }

  async remove (paths: string[]): Promise<void> {
    for (const path of paths) {
      const id = idOfPath(path)
      this.#local.delete(path)
      this.#pending.delete(path)
      this.#known.delete(path)
      if (id !== undefined) await this.#http.remove(id)
    }
  }

  /** A move keeps the file name, so the session (its id): only this process's bookkeeping moves. */
  async move (src: string, dst: string, _mtimeMs: number): Promise<void> {
    for (const map of [this.#known, this.#pending, this.#local] as Array<Map<string, unknown>>) {
      if (!map.has(src)) continue
      map.set(dst, map.get(src))
      if (src !== dst) map.delete(src)
    }
  }

  /** The conditions of a write that expects the file at `expectedSize` bytes (`null`: missing; `undefined`: any). */
  async #conditions (path: string, id: string, expectedSize: number | null | undefined): Promise<Record<string, string>> {
    if (expectedSize === undefined) return {}
    if (expectedSize === null) return { 'if-none-match': '*' }
    let known = this.#known.get(path)
    if (known?.size !== expectedSize) {
      const head = await this.#http.head(id)
      if (head !== undefined) this.#known.set(path, known = { id, ...head })
      if (head?.size !== expectedSize) throw new SessionWriteConflictError(path, expectedSize, head?.size ?? null)
    }
    return { 'if-match': known!.etag }
  }

  async #store (path: string, id: string, text: string, conditions: Record<string, string>, expectedSize: number | null | undefined): Promise<void> {
    await this.#sendBlobs(text)
    const etag = await this.#http.putFile(id, text, conditions)
    if (etag === undefined) {
      const head = await this.#http.head(id)
      throw new SessionWriteConflictError(path, expectedSize ?? null, head?.size ?? null)
    }
    this.#pending.delete(path)
    this.#known.set(path, { id, etag, size: bytesOf(text) })
  }

  async #sendBlobs (text: string): Promise<void> {
    for (const hash of blobHashes(text)) {
      if (this.#sentBlobs.has(hash)) continue
      let bytes: Buffer
      try {
        bytes = await readFile(join(this.#blobsDir, hash))
      } catch {
        continue
      }
      await this.#http.putBlob(hash, bytes)
      this.#sentBlobs.add(hash)
    }
  }

  async #fetchBlobs (text: string): Promise<void> {
    for (const hash of blobHashes(text)) {
      const path = join(this.#blobsDir, hash)
      if (await exists(path)) continue
      const bytes = await this.#http.getBlob(hash)
      if (bytes === undefined) continue
      const temp = `${path}.${process.pid}.${Date.now()}.tmp`
      await writeFile(temp, bytes)
      await rename(temp, path)
    }
  }
}

async function exists (path: string): Promise<boolean> {
  try {
    await access(path)
    return true
  } catch {
    return false
  }
}
