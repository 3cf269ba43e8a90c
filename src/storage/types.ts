/**
 * The file interface of the session model (SPEC.md §10). The manager performs every
 * session-file operation through it; blobs go through `BlobStore` instead. The service's stores
 * (store.ts) use it inside the disk and memory store; nothing here knows about HTTP, and no
 * caller ever branches on the concrete adapter.
 */

/** File facts as the model needs them. */
export interface StorageStat {
  /** Size in UTF-8 bytes. */
  size: number
  /** Last modification, epoch milliseconds. */
  mtimeMs: number
  mtime: Date
}

export interface OpenWriterOptions {
  /** `"a"` appends (creating the file), `"w"` truncates. */
  flags: 'a' | 'w'
  /** Called once with every error the writer meets (first error is also kept, see getError). */
  onError?: (err: Error) => void
}

/** @see SPEC.md §10.2 */
export interface SessionStorageWriter {
  /**
   * Writes `line` completely, looping over partial writes (a zero-byte write is the error
   * `Short write`). `line` carries its own trailing `"\n"` and MAY hold several complete lines,
   * which is how the manager group-commits a batch with one write call.
   * All or nothing: when it rejects, none of `line` is left in the file (the disk adapter
   * truncates back a write that failed part-way), so a file never ends in a partial line.
   * Written is not durable: call `fsync()` for that.
   */
  writeLine(line: string): Promise<void>
  /** Resolves when every write issued so far has completed. */
  flush(): Promise<void>
  /**
   * Makes everything written so far durable (`fdatasync` on disk). The first fsync of a writer
   * that created its file also syncs the parent directory.
   */
  fsync(): Promise<void>
  /**
   * Waits for pending operations, then releases the handle. Idempotent (later calls return the
   * same promise); best effort: the handle is always released, and the promise rejects with the
   * writer's first error when it has one. Afterwards `writeLine` and `fsync` reject with
   * `Writer closed` (`SS_WRITER_CLOSED`), which is not latched.
   */
  close(): Promise<void>
  /**
   * The first error this writer met, if any. After it, every `writeLine`, `flush` and `fsync`
   * rejects with that same error; every error met is also passed to `onError`.
   */
  getError(): Error | undefined
}

/** @see SPEC.md §10.1 */
export interface SessionStorage {
  /** Creates `dir` recursively if missing. */
  ensureDirSync(dir: string): void
  existsSync(path: string): boolean
  /** Writes the whole file, creating parent directories. Not atomic, not synced. */
  writeTextSync(path: string, content: string): void
  /** Throws an error with code `ENOENT` when missing. */
  statSync(path: string): StorageStat
  /**
   * Full paths of the direct children of `dir` whose name matches `pattern`
   * (`*`, `*.ext` or an exact name), sorted by name; files only, no directories or symlinks.
   * `[]` for a missing directory.
   */
  listFilesSync(dir: string, pattern: string): string[]
  /**
   * Full paths of the direct child directories of `dir` (symlinks not followed), sorted by name;
   * `[]` for a missing directory. Used to walk `DATA_DIR/sessions` at any depth.
   */
  listDirsSync(dir: string): string[]
  exists(path: string): Promise<boolean>
  /** Whole file as UTF-8; rejects with code `ENOENT` when missing. */
  readText(path: string): Promise<string>
  /** The first `maxBytes` bytes decoded as UTF-8; a character cut at the end becomes U+FFFD. */
  readTextPrefix(path: string, maxBytes: number): Promise<string>
  /**
   * `readTextPrefix`, synchronously: for scans of many small reads, where a round trip through
   * the thread pool per file costs more than the read. Throws an error with code `ENOENT` when
   * missing.
   */
  readTextPrefixSync(path: string, maxBytes: number): string
  /**
   * The whole file as UTF-8 text in order, in pieces that together equal `readText(path)`,
   * holding only a bounded amount (about 1 MiB on disk) at a time; the iteration rejects with
   * code `ENOENT` when the file is missing.
   */
  readTextChunks(path: string): AsyncIterable<string>
  writeText(path: string, content: string): Promise<void>
  /** Atomically replaces `nextPath`; on disk the destination directory is synced afterwards. */
  rename(path: string, nextPath: string): Promise<void>
  unlink(path: string): Promise<void>
  /**
   * A writer on `path`. Opening is lazy: nothing is created or truncated until the first
   * `writeLine` or `fsync`, which creates missing parent directories and then the file.
   * Operations run in call order.
   */
  openWriter(path: string, options: OpenWriterOptions): SessionStorageWriter
  /**
   * Syncs a directory so that entries created or renamed in it are durable.
   * A no-op for storages without directories.
   */
  syncDir(dir: string): Promise<void>
}
