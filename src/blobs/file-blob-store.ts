/**
 * `BlobStore` over a directory, normally `DATA_DIR/blobs` (SPEC.md §9.4). A blob is the file
 * `<dir>/<sha256 hex>` holding the raw bytes. A put is durable on return: temp file
 * `.<hash>.<16 hex>.tmp` in the same directory, write, fsync, rename into place, directory fsync.
 * Because the name is the content's hash, a rename over an existing blob is harmless, so
 * concurrent puts of the same bytes (in this process or another) are safe. Temp files left by a
 * crash are never read: only names that pass `isBlobHash` are looked up.
 *
 * A blob's modification time is when its bytes were last put: a put of stored bytes sets it to
 * now. Puts and removals of one hash run one at a time (one process owns the directory), so a
 * collection never removes bytes a put has just confirmed.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { join } from 'node:path'
import { closeFd, ensureDirDurable, fsyncFd, openFd, syncDir, writeAll } from '../storage/durable-fs.js'
import { assertBlobHash, blobRefFor, isBlobHash, sha256Hex } from './hash.js'
import { HEAD_BYTES } from './reader.js'
import type { BlobPutResult, BlobReader, BlobStat, BlobStore, BlobUsage } from './types.js'

/** Files stat'ed or removed at once by a scan or a removal (the thread pool does them side by side). */
const PARALLEL = 32

export class FileBlobStore implements BlobStore {
  readonly #dir: string
  /** Puts in flight per hash, so that concurrent puts of the same bytes write once. */
  readonly #pending = new Map<string, Promise<BlobPutResult>>()
  /** The tail of the puts and removals of each hash, run one at a time. */
  readonly #chains = new Map<string, Promise<unknown>>()
  /** Blobs and bytes stored, once counted (kept current by puts and removals). */
  #usage: BlobUsage | undefined
  /** Puts and removals so far: a count overlapping one is not kept. */
  #changes = 0

  /** `dir` is created (recursively) by the first put that needs it. */
  constructor (dir: string) {
    this.#dir = dir
  }

  /**
   * Stores `bytes` under their SHA-256 unless the blob exists. Durable on return. `created` is
   * true only for the call that wrote the file; a concurrent put of the same bytes in this
   * process waits for that call and reports `created: false`.
   */
  async put (bytes: Uint8Array): Promise<BlobPutResult> {
    const hash = sha256Hex(bytes)
    const pending = this.#pending.get(hash)
    if (pending !== undefined) {
      const first = await pending
      return { ...first, created: false }
    }
    const work = this.#serial(hash, async () => await this.#store(hash, bytes))
    this.#pending.set(hash, work)
    try {
      return await work
    } finally {
      this.#pending.delete(hash)
    }
  }

  /** The bytes, or `null` when absent. Rejects with `InvalidArgument` before any file access for an invalid hash. */
  async get (hash: string): Promise<Buffer | null> {
    assertBlobHash(hash)
    try {
      return await fs.promises.readFile(join(this.#dir, hash))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }

  /**
   * The blob file opened for streaming (64 KiB reads as the consumer pulls), or `null` when
   * absent. Rejects with `InvalidArgument` before any file access for an invalid hash.
   */
  async open (hash: string): Promise<BlobReader | null> {
    assertBlobHash(hash)
    let handle: fs.promises.FileHandle
    try {
      handle = await fs.promises.open(join(this.#dir, hash), 'r')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
    try {
      const { size } = await handle.stat()
      const head = Buffer.alloc(Math.min(HEAD_BYTES, size))
      await handle.read(head, 0, head.length, 0)
      return { size, head, stream: () => handle.createReadStream({ start: 0, autoClose: true }), close: async () => { await handle.close() } }
    } catch (err) {
      await handle.close().catch(() => {})
      throw err
    }
  }

  /** Whether the blob file exists. Rejects with `InvalidArgument` before any file access for an invalid hash. */
  async has (hash: string): Promise<boolean> {
    assertBlobHash(hash)
    return await this.#isFile(join(this.#dir, hash))
  }

  /** The names in the directory that are blob hashes (temp files skipped); nothing for a missing directory. */
  async * list (): AsyncIterable<string> {
    let dir: fs.Dir
    try {
      dir = await fs.promises.opendir(this.#dir)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
      throw err
    }
    for await (const entry of dir) if (entry.isFile() && isBlobHash(entry.name)) yield entry.name
  }

  /** Every blob with its size and time, the stats of `PARALLEL` files at a time. */
  async * scan (): AsyncIterable<BlobStat> {
    let hashes: string[] = []
    for await (const hash of this.list()) {
      hashes.push(hash)
      if (hashes.length < PARALLEL) continue
      yield * await this.#statAll(hashes)
      hashes = []
    }
    yield * await this.#statAll(hashes)
  }

  /**
   * Removes each unless put at or after `untouchedBefore`, each one at a time with the puts of
   * its hash, `PARALLEL` hashes at a time.
   */
  async remove (hashes: readonly string[], untouchedBefore: number): Promise<BlobStat[]> {
    for (const hash of hashes) assertBlobHash(hash)
    const removed: BlobStat[] = []
    for (let i = 0; i < hashes.length; i += PARALLEL) {
      const gone = await Promise.all(hashes.slice(i, i + PARALLEL).map(async (hash) => await this.#serial(hash, async () => {
        const stat = await this.#stat(hash)
        if (stat === undefined || stat.touchedMs >= untouchedBefore) return undefined
        await fs.promises.unlink(join(this.#dir, hash))
        this.#count(-1, -stat.size)
        return stat
      })))
      for (const stat of gone) if (stat !== undefined) removed.push(stat)
    }
    return removed
  }

  async #statAll (hashes: readonly string[]): Promise<BlobStat[]> {
    const stats = await Promise.all(hashes.map(async (hash) => await this.#stat(hash)))
    return stats.filter((stat): stat is BlobStat => stat !== undefined)
  }

  /** Counted by listing the directory once, then kept current. */
  async usage (): Promise<BlobUsage> {
    if (this.#usage !== undefined) return { ...this.#usage }
    const before = this.#changes
    const counted: BlobUsage = { blobs: 0, bytes: 0 }
    for await (const stat of this.scan()) {
      counted.blobs++
      counted.bytes += stat.size
    }
    if (this.#changes === before) this.#usage = { ...counted }
    return counted
  }

  #count (blobs: number, bytes: number): void {
    this.#changes++
    if (this.#usage !== undefined) this.#usage = { blobs: this.#usage.blobs + blobs, bytes: this.#usage.bytes + bytes }
  }

  async #stat (hash: string): Promise<BlobStat | undefined> {
    try {
      const st = await fs.promises.stat(join(this.#dir, hash))
      return st.isFile() ? { hash, size: st.size, touchedMs: st.mtimeMs } : undefined
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
  }

  /** Runs `fn` after every earlier put or removal of `hash`. */
  #serial<T> (hash: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.#chains.get(hash) ?? Promise.resolve()).then(fn, fn)
    const tail = run.catch(() => {})
    this.#chains.set(hash, tail)
    void tail.then(() => { if (this.#chains.get(hash) === tail) this.#chains.delete(hash) })
    return run
  }

  async #store (hash: string, bytes: Uint8Array): Promise<BlobPutResult> {
    const result: BlobPutResult = { hash, ref: blobRefFor(hash), created: false }
    const target = join(this.#dir, hash)
    if (await this.#touch(target)) return result
    await ensureDirDurable(this.#dir)
    const tmp = join(this.#dir, `.${hash}.${randomBytes(8).toString('hex')}.tmp`)
    const fd = await openFd(tmp, 'wx')
    let closed = false
    try {
      await writeAll(fd, bytes)
      await fsyncFd(fd)
      closed = true
      await closeFd(fd)
      await fs.promises.rename(tmp, target)
    } catch (err) {
      if (!closed) await closeFd(fd).catch(() => {})
      await fs.promises.unlink(tmp).catch(() => {})
      throw err
    }
    await syncDir(this.#dir)
    this.#count(1, bytes.length)
    return { ...result, created: true }
  }

  /** Marks a stored blob as put now; false when there is none. */
  async #touch (path: string): Promise<boolean> {
    try {
      const now = new Date()
      await fs.promises.utimes(path, now, now)
      return true
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw err
    }
  }

  async #isFile (path: string): Promise<boolean> {
    try {
      return (await fs.promises.stat(path)).isFile()
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw err
    }
  }
}
