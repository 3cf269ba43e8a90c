/**
 * `SessionStorage` in memory (SPEC.md §10.4), for tests and in-memory sessions. It mirrors the
 * disk adapter wherever callers can observe a difference: sizes and prefixes are UTF-8 bytes,
 * missing paths fail with code `ENOENT`, directories exist once created or implied by a file,
 * and a writer keeps writing to the file it opened (like a file descriptor follows its inode)
 * even when that file is renamed. Nothing here is durable; `fsync` and `syncDir` do nothing.
 */
import { PathTree, fsError, pathKey as key } from './path-tree.js'
import { SerialWriter, type WriterBackend } from './serial-writer.js'
import { assertByteCount, decodeUtf8 } from './storage-helpers.js'
import type { OpenWriterOptions, SessionStorage, SessionStorageWriter, StorageStat } from './types.js'

/** The mutating steps a test can make fail through `failWrites`. */
export type MemoryWriteOp = 'writeText' | 'writeLine' | 'fsync' | 'rename'

export interface MemorySessionStorageOptions {
  /**
   * Failure injection for tests (e.g. ENOSPC on one path). Consulted before each mutating step
   * with the path that step targets: `writeTextSync`/`writeText` → `'writeText'`, a writer's
   * `writeLine` → `'writeLine'` and `fsync` → `'fsync'` (after the writer has opened or created
   * its file, as a disk open would have), `rename` → `'rename'` with the destination path.
   * Returning an error makes the step fail with it and change nothing; `undefined` lets it run.
   */
  failWrites?: (path: string, op: MemoryWriteOp) => Error | undefined
}

/** One stored file; a writer holds on to this object the way a descriptor holds an inode. */
interface MemoryFile {
  content: string
  mtimeMs: number
}

/** @see SPEC.md §10.1, §10.4 */
/** Characters per piece of `readTextChunks`. */
const CHUNK_CHARS = 256 * 1024

export class MemorySessionStorage implements SessionStorage {
  readonly #tree = new PathTree<MemoryFile>()
  readonly #failWrites: MemorySessionStorageOptions['failWrites']
  #lastMtimeMs = 0

  constructor (options: MemorySessionStorageOptions = {}) {
    this.#failWrites = options.failWrites
  }

  /** Records `dir` and its ancestors as directories. */
  ensureDirSync (dir: string): void {
    this.#tree.addDirs(dir)
  }

  /** True for a file, or for a directory created by `ensureDirSync` or implied by a file below it. */
  existsSync (path: string): boolean {
    return this.#tree.exists(path)
  }

  /** Replaces the whole content (creating parent directories); an open writer sees the new content. */
  writeTextSync (path: string, content: string): void {
    const k = key(path)
    this.#inject(k, 'writeText')
    this.#put(k, content)
  }

  /** `size` in UTF-8 bytes; throws code `ENOENT` when missing (`EISDIR` for a directory: files only). */
  statSync (path: string): StorageStat {
    const file = this.#tree.file(path, 'stat')
    return { size: Buffer.byteLength(file.content, 'utf8'), mtimeMs: file.mtimeMs, mtime: new Date(file.mtimeMs) }
  }

  /** Full paths (`join(dir, name)`) of files directly in `dir` matching `pattern`, sorted by name. */
  listFilesSync (dir: string, pattern: string): string[] {
    return this.#tree.listFiles(dir, pattern)
  }

  /** Full paths of the directories directly in `dir`, created or implied by a file; sorted. */
  listDirsSync (dir: string): string[] {
    return this.#tree.listDirs(dir)
  }

  async exists (path: string): Promise<boolean> {
    return this.existsSync(path)
  }

  async readText (path: string): Promise<string> {
    return this.#tree.file(path, 'open').content
  }

  /** The file as it is now, in pieces of at most `CHUNK_CHARS` UTF-16 units (a surrogate pair is never split). */
  async * readTextChunks (path: string): AsyncIterable<string> {
    const content = this.#tree.file(path, 'open').content
    for (let at = 0; at < content.length;) {
      let end = Math.min(content.length, at + CHUNK_CHARS)
      const last = content.charCodeAt(end - 1)
      if (end < content.length && last >= 0xd800 && last <= 0xdbff) end--
      yield content.slice(at, end)
      at = end
    }
  }

  /** The first `maxBytes` UTF-8 bytes, decoded; a character cut at the end becomes U+FFFD. */
  async readTextPrefix (path: string, maxBytes: number): Promise<string> {
    return this.readTextPrefixSync(path, maxBytes)
  }

  readTextPrefixSync (path: string, maxBytes: number): string {
    assertByteCount(maxBytes)
    const bytes = Buffer.from(this.#tree.file(path, 'open').content, 'utf8')
    return decodeUtf8(bytes.subarray(0, maxBytes))
  }

  async writeText (path: string, content: string): Promise<void> {
    this.writeTextSync(path, content)
  }

  /** Moves the file object to `nextPath`, replacing any file there; keeps its mtime. */
  async rename (path: string, nextPath: string): Promise<void> {
    const from = key(path)
    const to = key(nextPath)
    const file = this.#tree.file(path, 'rename')
    this.#inject(to, 'rename')
    this.#tree.assertCanPut(to, 'rename')
    if (from === to) return
    this.#tree.delete(from)
    this.#tree.set(to, file)
  }

  async unlink (path: string): Promise<void> {
    this.#tree.file(path, 'unlink')
    this.#tree.delete(path)
  }

  /**
   * A writer with the same semantics as the disk writer (see `SerialWriter`). The file is
   * opened on the first `writeLine` or `fsync`: `"a"` creates it if missing, `"w"` truncates.
   */
  openWriter (path: string, options: OpenWriterOptions): SessionStorageWriter {
    const k = key(path)
    let opened: MemoryFile | undefined
    const open = (): MemoryFile => {
      if (opened !== undefined) return opened
      if (this.#tree.isDir(k)) throw fsError('EISDIR', 'open', path)
      const existing = this.#tree.get(k)
      opened = existing === undefined || options.flags === 'w' ? this.#put(k, '') : existing
      return opened
    }
    const backend: WriterBackend = {
      write: async (line) => {
        const file = open()
        this.#inject(k, 'writeLine')
        file.content += line
        file.mtimeMs = this.#tick()
      },
      sync: async () => {
        open()
        this.#inject(k, 'fsync')
      },
      release: async () => {},
    }
    return new SerialWriter(backend, options.onError)
  }

  /** Nothing to sync in memory. */
  async syncDir (_dir: string): Promise<void> {}

  /** `max(Date.now(), last + 1)`: strictly increasing per instance, so "newest" is deterministic. */
  #tick (): number {
    this.#lastMtimeMs = Math.max(Date.now(), this.#lastMtimeMs + 1)
    return this.#lastMtimeMs
  }

  #inject (path: string, op: MemoryWriteOp): void {
    const err = this.#failWrites?.(path, op)
    if (err !== undefined) throw err
  }

  /** Writes `content` into the file at `k` (in place when it exists, so writers keep seeing it). */
  #put (k: string, content: string): MemoryFile {
    const file = this.#tree.get(k) ?? { content: '', mtimeMs: 0 }
    this.#tree.set(k, file)
    file.content = content
    file.mtimeMs = this.#tick()
    return file
  }
}
