/**
 * `SessionStorage` on the real file system (SPEC.md §10.3). Appends are durable only after
 * `fsync()` (fdatasync); the first fsync of a writer that created its file also syncs the parent
 * directory; `rename` syncs the destination directory; `ensureDirSync` syncs the parent of every
 * directory it creates. A write that fails part-way (a short write, then ENOSPC) is undone, so a
 * file never ends in part of a line this process wrote. Paths are used as given: confining them
 * to `DATA_DIR` is the caller's job (see `resolveInside` in `paths.ts`).
 */
import fs from 'node:fs'
import { dirname, join } from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import {
  closeFd, ensureDirDurable, ensureDirDurableSync, fdatasyncFd, openFd, syncDir, writeAllOrUndo
} from './durable-fs.js'
import { SerialWriter, type WriterBackend } from './serial-writer.js'
import { assertByteCount, decodeUtf8, nameMatcher } from './storage-helpers.js'
import type { OpenWriterOptions, SessionStorage, SessionStorageWriter, StorageStat } from './types.js'

const { O_APPEND, O_CREAT, O_EXCL, O_TRUNC, O_WRONLY } = fs.constants

/** Bytes read at a time by `readTextChunks`, and decoded at a time. */
const READ_CHUNK_BYTES = 1 << 20
/** Reused by `readTextPrefixSync` for prefixes up to its size (decoded before the call returns). */
const SCAN_BUFFER = Buffer.alloc(16 * 1024)
const DECODE_BYTES = 64 * 1024

/**
 * One file descriptor for the writer's lifetime, opened on first use (`openWriter` is
 * synchronous). Creation is detected race-free: an `O_EXCL` open that succeeds created the file.
 */
class FileWriterBackend implements WriterBackend {
  readonly #path: string
  readonly #flags: 'a' | 'w'
  readonly #syncDir: (dir: string) => Promise<void>
  #fd: number | undefined
  #created = false
  #dirSynced = false

  constructor (path: string, flags: 'a' | 'w', syncDir: (dir: string) => Promise<void>) {
    this.#path = path
    this.#flags = flags
    this.#syncDir = syncDir
  }

  /** All of `line` or, when the write fails part-way (disk full), none of it (see `writeAllOrUndo`). */
  write (line: string): Promise<void> {
    // The descriptor is open after the first call: then one promise per write, none to open.
    const fd = this.#fd
    if (fd !== undefined) return writeAllOrUndo(fd, Buffer.from(line, 'utf8'))
    return this.#open().then((opened) => writeAllOrUndo(opened, Buffer.from(line, 'utf8')))
  }

  sync (): Promise<void> {
    const fd = this.#fd
    if (fd !== undefined && (!this.#created || this.#dirSynced)) return fdatasyncFd(fd)
    return this.#firstSync()
  }

  async #firstSync (): Promise<void> {
    await fdatasyncFd(await this.#open())
    if (this.#created && !this.#dirSynced) {
      // The new directory entry must be durable before the first durable acknowledgement (§8.4).
      await this.#syncDir(dirname(this.#path))
      this.#dirSynced = true
    }
  }

  async release (): Promise<void> {
    const fd = this.#fd
    if (fd === undefined) return
    this.#fd = undefined
    await closeFd(fd)
  }

  async #open (): Promise<number> {
    if (this.#fd !== undefined) return this.#fd
    await ensureDirDurable(dirname(this.#path))
    const mode = this.#flags === 'a' ? O_APPEND : O_TRUNC
    // Retry: the file may vanish between the failed exclusive open and the plain one.
    for (let attempt = 0; ; attempt++) {
      try {
        this.#fd = await openFd(this.#path, O_WRONLY | O_CREAT | O_EXCL | mode)
        this.#created = true
        return this.#fd
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      }
      try {
        this.#fd = await openFd(this.#path, O_WRONLY | mode)
        return this.#fd
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw err
      }
    }
  }
}

/** @see SPEC.md §10.1, §10.3 */
export class FileSessionStorage implements SessionStorage {
  /** Creates `dir` and missing ancestors; fsyncs the parent of each directory it created. */
  ensureDirSync (dir: string): void {
    ensureDirDurableSync(dir)
  }

  /** Whether a file or directory exists at `path`. */
  existsSync (path: string): boolean {
    return fs.existsSync(path)
  }

  /** Writes the whole file (UTF-8), creating parent directories. Not atomic, not synced. */
  writeTextSync (path: string, content: string): void {
    ensureDirDurableSync(dirname(path))
    fs.writeFileSync(path, content, 'utf8')
  }

  /** `size` in bytes; throws code `ENOENT` when missing. */
  statSync (path: string): StorageStat {
    const st = fs.statSync(path)
    return { size: st.size, mtimeMs: st.mtimeMs, mtime: st.mtime }
  }

  /**
   * Full paths (`join(dir, name)`) of the regular files directly in `dir` whose name matches
   * `pattern`, sorted by name. Directories, symlinks and other entries are skipped. `[]` when
   * `dir` is missing or not a directory.
   */
  listFilesSync (dir: string, pattern: string): string[] {
    const matches = nameMatcher(pattern)
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return []
      throw err
    }
    return entries
      .filter((entry) => entry.isFile() && matches(entry.name))
      .map((entry) => entry.name)
      .sort()
      .map((name) => join(dir, name))
  }

  /** Full paths of the direct child directories of `dir`, sorted; `[]` when missing. */
  listDirsSync (dir: string): string[] {
    try {
      return fs.readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort()
        .map((name) => join(dir, name))
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return []
      throw err
    }
  }

  async exists (path: string): Promise<boolean> {
    try {
      await fs.promises.access(path)
      return true
    } catch {
      return false
    }
  }

  /** Whole file decoded as UTF-8 (a BOM is kept as U+FEFF); rejects with code `ENOENT` when missing. */
  readText (path: string): Promise<string> {
    return fs.promises.readFile(path, 'utf8')
  }

  /**
   * Reads at most the first `maxBytes` bytes (never more) and decodes them as UTF-8; a character
   * cut at the end becomes U+FFFD. Rejects with code `ENOENT` when missing.
   */
  async readTextPrefix (path: string, maxBytes: number): Promise<string> {
    assertByteCount(maxBytes)
    const handle = await fs.promises.open(path, 'r')
    try {
      // Never allocate more than the file holds: maxBytes may be far larger than the file.
      const cap = Math.min(maxBytes, (await handle.stat()).size)
      const buf = Buffer.alloc(cap)
      let filled = 0
      while (filled < cap) {
        const { bytesRead } = await handle.read(buf, filled, cap - filled, filled)
        if (bytesRead === 0) break
        filled += bytesRead
      }
      return decodeUtf8(buf.subarray(0, filled))
    } finally {
      await handle.close()
    }
  }

  /**
   * `readTextPrefix` without the thread pool: open, read until `maxBytes` or the end, close. A
   * prefix that fits `SCAN_BUFFER` is read into it without asking the file's size first.
   */
  readTextPrefixSync (path: string, maxBytes: number): string {
    assertByteCount(maxBytes)
    const fd = fs.openSync(path, 'r')
    try {
      const cap = maxBytes <= SCAN_BUFFER.length ? maxBytes : Math.min(maxBytes, fs.fstatSync(fd).size)
      const buf = cap <= SCAN_BUFFER.length ? SCAN_BUFFER : Buffer.alloc(cap)
      let filled = 0
      while (filled < cap) {
        const bytesRead = fs.readSync(fd, buf, filled, cap - filled, filled)
        if (bytesRead === 0) break
        filled += bytesRead
      }
      return decodeUtf8(buf.subarray(0, filled))
    } finally {
      fs.closeSync(fd)
    }
  }

  /**
   * The file read `READ_CHUNK_BYTES` at a time and decoded as UTF-8 in pieces of at most
   * `DECODE_BYTES` (a character split between pieces is decoded whole); the pieces join to
   * `readText(path)`. Small pieces stay young garbage for V8: a 1 MiB string would go to the
   * large-object space and stay there until a full collection.
   */
  async * readTextChunks (path: string): AsyncIterable<string> {
    const handle = await fs.promises.open(path, 'r')
    try {
      const decoder = new StringDecoder('utf8')
      const buf = Buffer.allocUnsafe(READ_CHUNK_BYTES)
      for (;;) {
        const { bytesRead } = await handle.read(buf, 0, buf.length, null)
        if (bytesRead === 0) break
        for (let at = 0; at < bytesRead; at += DECODE_BYTES) yield decoder.write(buf.subarray(at, Math.min(bytesRead, at + DECODE_BYTES)))
      }
      const rest = decoder.end()
      if (rest !== '') yield rest
    } finally {
      await handle.close()
    }
  }

  /** Async `writeTextSync`. Not atomic, not synced. */
  async writeText (path: string, content: string): Promise<void> {
    await ensureDirDurable(dirname(path))
    await fs.promises.writeFile(path, content, 'utf8')
  }

  /**
   * Atomically replaces `nextPath` with `path` (POSIX rename), then syncs the destination
   * directory so the new name is durable. The destination directory must exist. A rejection
   * from the directory sync comes after the rename happened: only its durability is in doubt.
   */
  async rename (path: string, nextPath: string): Promise<void> {
    await fs.promises.rename(path, nextPath)
    await this.syncDir(dirname(nextPath))
  }

  /** Deletes a file; rejects with code `ENOENT` when missing. Not synced. */
  unlink (path: string): Promise<void> {
    return fs.promises.unlink(path)
  }

  /**
   * A writer holding one file descriptor for its lifetime. Nothing touches the disk until the
   * first `writeLine` or `fsync`, which creates missing parent directories and opens the file
   * (`"a"`: append, creating it; `"w"`: truncate, creating it). Its first `fsync()` after it
   * created the file also calls `this.syncDir(parent)`.
   */
  openWriter (path: string, options: OpenWriterOptions): SessionStorageWriter {
    const backend = new FileWriterBackend(path, options.flags, (dir) => this.syncDir(dir))
    return new SerialWriter(backend, options.onError)
  }

  /**
   * fsyncs directory `dir` (open read-only, fsync, close). Resolves without syncing only on
   * platforms that cannot fsync directories; rejects with code `ENOENT` for a missing `dir`.
   */
  syncDir (dir: string): Promise<void> {
    return syncDir(dir)
  }
}
