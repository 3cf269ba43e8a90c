/**
 * The per-manager persistence pipeline (SPEC.md §8.2–§8.7): one FIFO of disk tasks run strictly
 * one after another, one lazily opened append writer, error latching, group commit and the
 * atomic full rewrite.
 */
import { randomBytes } from 'node:crypto'
import { basename, dirname, join } from 'node:path'
import type { BlobStore } from '../blobs/types.js'
import type { SessionStorage, SessionStorageWriter } from '../storage/types.js'
import { commitBatch } from '../metrics/instruments.js'
import type { Logger } from './logger.js'
import { prepareRecordForWrite, serializeRecord, storedLineSync } from './persist-transform.js'
import type { FileRecord } from './types.js'

/**
 * Records queued for one append write. A record whose line could be made when it was queued is
 * held as that line; one with image data to externalize stays a record until the task runs.
 * `sync`: a flush came while the batch was the newest task, so its task syncs after writing
 * (`done` settles after both), and that flush needs no task of its own.
 */
interface Batch {
  path: string
  items: Array<string | FileRecord>
  started: boolean
  sync: boolean
  done: Promise<void> | undefined
}

/** Batches observed in the commit-size histogram, with its label bound once. */
const fileCommitBatch = commitBatch.labels({ storage: 'file' })

function isLine (item: string | FileRecord): item is string {
  return typeof item === 'string'
}

/** The stored line of `record` when it can be made synchronously, else the record itself. */
function lineNow (record: FileRecord): string | FileRecord {
  try {
    return storedLineSync(record) ?? record
  } catch {
    return record // made (and its error latched) by the write task, as for any record
  }
}

/** Temp file of an atomic rewrite: `.<basename>.<16 lowercase hex>.tmp` beside the target (§2.4). */
export function tempPathFor (target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(8).toString('hex')}.tmp`)
}

export class WriteQueue {
  readonly #storage: SessionStorage
  readonly #blobs: BlobStore
  readonly #log: Logger
  #tail: Promise<unknown> = Promise.resolve()
  #latched: Error | undefined
  #writer: SessionStorageWriter | undefined
  #writerPath: string | undefined
  /** Unsynced bytes went through the current writer. */
  #dirty = false
  /** The newest append batch, while its task has not started: later appends join it. */
  #openBatch: Batch | undefined
  /** The newest sync task, while nothing was queued after it: later flushes join it. */
  #lastSync: Promise<void> | undefined
  /** This file ends without `"\n"`: the next append to it starts a new line first. */
  #tornFile: string | undefined
  /** The file the newest task targets, for the latch log line. */
  #lastPath: string | undefined

  constructor (storage: SessionStorage, blobs: BlobStore, log: Logger) {
    this.#storage = storage
    this.#blobs = blobs
    this.#log = log
  }

  /** The first persistence error met since the last reset, if any. */
  get latched (): Error | undefined { return this.#latched }

  /** Forgets the latched error (SPEC.md §8.7: setSessionFile, newSession, fork, moveTo). */
  clearLatch (): void { this.#latched = undefined }

  /**
   * The bound file ends in a torn line (a crash mid-append): the next append writes `"\n"`
   * first, so its own line stays whole and the fragment remains one skipped line.
   */
  separateNextAppend (path: string): void { this.#tornFile = path }

  /** Throws the latched error, unchanged, when there is one. */
  throwIfLatched (): void {
    if (this.#latched !== undefined) throw this.#latched
  }

  /**
   * Queues `records` to be appended to `path` as lines. Consecutive appends queued before their
   * task starts are coalesced into one write call (group commit, §8.4); file order is append order.
   */
  appendLines (path: string, records: readonly FileRecord[]): void {
    // Lines are made now, while the request is handled, so that the write task only writes:
    // the time between one batch's sync and the next batch's write stays short (group commit).
    const items = records.map(lineNow)
    const open = this.#openBatch
    if (open !== undefined && !open.started && open.path === path) {
      for (const item of items) open.items.push(item)
      return
    }
    const batch: Batch = { path, items, started: false, sync: false, done: undefined }
    this.#lastPath = path
    const done = this.#enqueue('append', async () => {
      batch.started = true
      if (this.#openBatch === batch) this.#openBatch = undefined
      if (this.#lastSync === batch.done) this.#lastSync = undefined
      fileCommitBatch.observe(batch.items.length)
      const lines = batch.items.every(isLine) ? batch.items.join('') : await this.#prepare(batch.items)
      const writer = this.#ensureWriter(path)
      this.#dirty = true
      await writer.writeLine(this.#tornFile === path ? '\n' + lines : lines)
      if (this.#tornFile === path) this.#tornFile = undefined
      if (batch.sync) {
        this.#dirty = false
        await writer.fsync()
      }
    })
    done.catch(() => {}) // latched; surfaced by flush(), close() and the next append
    batch.done = done
    this.#openBatch = batch
  }

  /**
   * Resolves once every task queued so far has run and the append writer's data is durable
   * (fdatasync). Concurrent callers share one sync when nothing was queued between them.
   * Rejects with the latched error.
   */
  async flush (): Promise<void> {
    let sync = this.#lastSync
    const open = this.#openBatch
    if (sync === undefined && open !== undefined && !open.started) {
      // The newest task is an append batch that has not started: it syncs after its write.
      open.sync = true
      sync = this.#lastSync = open.done
    }
    if (sync === undefined) {
      sync = this.#enqueue('sync', async () => {
        if (this.#lastSync === sync) this.#lastSync = undefined
        if (this.#writer !== undefined && this.#dirty) {
          this.#dirty = false
          await this.#writer.fsync()
        }
      })
      this.#lastSync = sync
    }
    await sync.catch(() => {})
    this.throwIfLatched()
  }

  /** Waits for every queued task, syncs and closes the writer; reports the latched error. */
  async close (): Promise<void> {
    await this.flush().catch(() => {})
    await this.closeWriter()
    this.throwIfLatched()
  }

  /** Queued: closes the append writer (allowed while latched). Never rejects. */
  closeWriter (): Promise<void> {
    return this.#enqueue('close', async () => { await this.#dropWriter() }).catch(() => {})
  }

  /**
   * Queued atomic full rewrite of `target` with `records` (§8.6): close the append writer,
   * prepare every record (blob writes happen here), write a temp file, fsync, close, rename
   * (the storage syncs the directory). On failure the temp file is removed and the target is
   * left as it was; the error latches.
   */
  rewrite (target: string, records: readonly FileRecord[]): Promise<void> {
    const snapshot = [...records]
    this.#lastPath = target
    return this.#enqueue('rewrite', async () => {
      await this.#dropWriter()
      const text = await this.#prepare(snapshot)
      await writeAtomically(this.#storage, target, text)
      if (this.#tornFile === target) this.#tornFile = undefined
    })
  }

  /** The lines of `items`: records are prepared here (blob writes happen here), lines kept as they are. */
  async #prepare (items: ReadonlyArray<string | FileRecord>): Promise<string> {
    let text = ''
    for (const item of items) text += typeof item === 'string' ? item : serializeRecord(await prepareRecordForWrite(item, this.#blobs))
    return text
  }

  #ensureWriter (path: string): SessionStorageWriter {
    if (this.#writer !== undefined && this.#writerPath === path) return this.#writer
    if (this.#writer !== undefined) throw new Error('append writer bound to another file')
    this.#storage.ensureDirSync(dirname(path))
    this.#writer = this.#storage.openWriter(path, { flags: 'a' })
    this.#writerPath = path
    return this.#writer
  }

  async #dropWriter (): Promise<void> {
    const writer = this.#writer
    if (writer === undefined) return
    this.#writer = undefined
    this.#writerPath = undefined
    try {
      if (this.#dirty && writer.getError() === undefined) await writer.fsync()
    } finally {
      this.#dirty = false
      await writer.close().catch(() => {})
    }
  }

  /**
   * Appends a task to the FIFO. While latched every task except a writer close fails with the
   * latched error; the first error a task raises latches and is logged once (§8.7).
   */
  #enqueue (kind: 'append' | 'sync' | 'close' | 'rewrite', task: () => Promise<void>): Promise<void> {
    // A sync may be joined only while it is the newest task. An append batch may still take
    // lines while only syncs follow it (they then cover those lines too), but never across a
    // rewrite or a writer close: file order is append order.
    if (kind === 'rewrite' || kind === 'close') this.#openBatch = undefined
    if (kind !== 'sync') this.#lastSync = undefined
    const run = async (): Promise<void> => {
      if (this.#latched !== undefined && kind !== 'close') throw this.#latched
      try {
        await task()
      } catch (err) {
        if (kind !== 'close') this.#latch(err as Error)
        throw err
      }
    }
    const result = this.#tail.then(run, run)
    this.#tail = result.catch(() => {})
    return result
  }

  #latch (err: Error): void {
    if (this.#latched !== undefined) return
    this.#latched = err
    this.#log.error({ err, sessionFile: this.#lastPath }, 'Session persistence error.')
  }
}

/**
 * temp file → write → fsync → close → rename over `target` (§8.6). The temp file is removed on
 * failure, ignoring errors there.
 */
export async function writeAtomically (storage: SessionStorage, target: string, text: string): Promise<void> {
  const tmp = tempPathFor(target)
  storage.ensureDirSync(dirname(target))
  const writer = storage.openWriter(tmp, { flags: 'w' })
  try {
    await writer.writeLine(text)
    await writer.fsync()
    await writer.close()
    await storage.rename(tmp, target)
  } catch (err) {
    await writer.close().catch(() => {})
    await storage.unlink(tmp).catch(() => {})
    throw err
  }
}
