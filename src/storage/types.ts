/**
 * The storage seam of the session model (SPEC.md §10). The manager performs every
 * session-file operation through this interface; blobs go through `BlobStore` instead.
 * Nothing here knows about HTTP, and no caller ever branches on the concrete adapter.
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
   * missing. Optional: without it, callers use `readTextPrefix`.
   */
  readTextPrefixSync?(path: string, maxBytes: number): string
  /**
   * The whole file as UTF-8 text in order, in pieces that together equal `readText(path)`,
   * holding only a bounded amount (about 1 MiB on disk) at a time; the iteration rejects with
   * code `ENOENT` when the file is missing. Optional: without it, callers use `readText`.
   */
  readTextChunks?(path: string): AsyncIterable<string>
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

  // Several processes on one store (PostgreSQL). A storage that one process owns has none of
  // these; callers then treat every state they hold as current.

  /**
   * Records the state stored at `path` now as the one this process's single reader-writer of
   * the file holds; call it before reading the file to load it. The storage moves it on with
   * that process's own writes; an append to the file or a rename onto it fails with an error
   * of code `ESTALE`, changing nothing, once another process changed the file.
   */
  track?(path: string): Promise<void>
  /** False when another process changed the file since this one tracked it or last wrote it. */
  isCurrent?(path: string): Promise<boolean>
  /**
   * The generation of `path` this process holds (tracked or written): the same number in every
   * process for the same stored file, a new one when the file is rewritten whole.
   */
  generation?(path: string): number | undefined
  /** Calls `listener` with every path another process changed; returns the stop function. */
  watch?(listener: (path: string) => void): () => void
  /**
   * The lines of the file after its first `lines` lines, when another process only appended to
   * it since this one tracked or wrote it; the state this process holds then moves on to what
   * was read. Undefined when the file changed otherwise (it must be read whole again).
   */
  readLinesAfter?(path: string, lines: number): Promise<string | undefined>
  /** Brings what the synchronous calls answer up to date with every change committed so far. */
  sync?(): Promise<void>
  /** The paths of the stored session files whose header id is `id`, up to date (see `sync`). */
  locate?(id: string): Promise<string[]>
  /** Sessions with no file yet (SPEC.md §8.3), kept where every process finds them. */
  unsaved?: UnsavedSessions
  /** Answers to appends sent with an `Idempotency-Key`, kept for every process. */
  replays?: ReplayStore
}

/**
 * Sessions without an assistant message yet, which have no file, kept in a store several
 * processes share; each is named by the path its file will have and read whole, as JSONL text
 * (header first). Storing a file of the same session (its first flush) takes the unsaved one's
 * place; like a file, it fails with `ESTALE` when another process changed the unsaved session
 * since this one found or stored it.
 */
export interface UnsavedSessions {
  /**
   * Stores the whole session. Queued at once, so a later write of its file runs after it.
   * Rejects with `ESTALE` when another process changed (or saved, or removed) the session since
   * this one found or stored it, or, for a session this process never held, when one of its id exists.
   */
  put(path: string, text: string): Promise<void>
  /** The unsaved sessions of id `id` (any tenant): where their files will be, and their text. */
  find(id: string): Promise<Array<{ path: string, text: string }>>
  /** False when another process changed the session since this one found or stored it. */
  isCurrent(path: string): Promise<boolean>
  /** Removes the session (deleted before it was ever saved). */
  remove(path: string): Promise<void>
  /** Calls `listener` with the path of each session held here that another process changed; returns the stop function. */
  watch(listener: (path: string) => void): () => void
}

/** The first answer to an append with an `Idempotency-Key`. */
export interface StoredReplay {
  /** SHA-256 of the request body. */
  bodyHash: string
  /** The answer as the registry replays it. */
  response: unknown
}

/**
 * What `ReplayStore.claim` found: the key is now the attempt's (`held`), or another attempt's:
 * with its `response` once that one answered, without while it is still in flight.
 */
export type ReplayClaim = { held: true } | { held: false, bodyHash: string, response?: unknown }

/**
 * Idempotency-Keys of appends, per session (named by its file's path and its id), with expiry.
 * An attempt (named `owner`, unique to it) claims its key before it appends, so that one
 * attempt at a time holds a key, whichever process it runs in.
 */
export interface ReplayStore {
  /** How often, in ms, an attempt holding a key renews its claim while it works. */
  readonly renewMs: number
  /**
   * Claims `key` for `owner`: held when the key is free, expired, already `owner`'s, or held
   * by an attempt that stopped renewing it; else what the key holds.
   */
  claim(path: string, session: string, key: string, bodyHash: string, owner: string): Promise<ReplayClaim>
  /** Keeps `owner`'s answer in place of its claim; false when `owner` no longer holds the key. */
  keep(path: string, session: string, key: string, owner: string, replay: StoredReplay): Promise<boolean>
  /** Tells the other attempts that `owner` still works on `key`. */
  renew(path: string, session: string, key: string, owner: string): Promise<void>
  /** Frees `key` when `owner` holds it (its attempt failed), so that a retry appends. */
  release(path: string, session: string, key: string, owner: string): Promise<void>
  /**
   * Keeps `owner`'s answer in the same transaction as the write of the lines of `entryIds` to
   * `path`, when that write is yet to come: a process that dies after the lines are committed
   * leaves the answer kept, never an append that a retry would make again.
   */
  keepWithLines?(path: string, session: string, key: string, owner: string, replay: StoredReplay, entryIds: readonly string[]): KeptWithLines
}

/** An answer waiting for the write of its lines (`ReplayStore.keepWithLines`). */
export interface KeptWithLines {
  /** True once the write that carried the answer committed it. */
  readonly committed: boolean
  /** Forgets the answer if no write has taken it yet. */
  drop(): void
}
