/**
 * Session files read into the JSONL store's search index a piece at a time (file-scan.ts): a
 * file the listing check found changed (`SearchBackfill`, in the background, so that the check
 * and the requests waiting for it do not wait for indexing), and every file on a rebuild. What
 * waits to be indexed bounds how far the reading runs ahead, so that the memory a large file
 * takes is a few pieces.
 */
import type { SessionStorage } from '../types.js'
import { LineReader, PIECE_CHARS } from './file-scan.js'
import type { SearchIndex } from './search-index.js'

/** Tries at reading a file that grows meanwhile, before its documents wait for its next load. */
const READ_TRIES = 3
/** Characters waiting to be indexed beyond which reading waits for the index. */
export const BACKLOG_CHARS = 2 * PIECE_CHARS

/** A session file to read: its session, path and size when known (a small file is read in one call). */
export interface FileToRead { tenant: string, id: string, path: string, size?: number }

export interface FeedContext {
  storage: SessionStorage
  search: SearchIndex
}

/**
 * Reads `path` into the index as the lines of session `tenant/id`: the first piece replaces every
 * earlier document of the session, the others are appended. Returns false when the file grew
 * while it was read (an append made meanwhile indexes its own lines; the file is read again).
 */
export async function searchFile (ctx: FeedContext, file: FileToRead): Promise<boolean> {
  const { tenant, id, path } = file
  const reader = new LineReader(ctx.storage, path, 0, file.size)
  let started = false
  const add = async (lines: readonly string[]): Promise<void> => {
    if (started) ctx.search.append(tenant, id, lines)
    else ctx.search.replace(tenant, id, lines)
    started = true
    await ctx.search.room(BACKLOG_CHARS)
  }
  for await (const piece of reader.pieces()) await add(piece)
  if (!started) await add([])
  try {
    return ctx.storage.statSync(path).size === reader.bytes
  } catch {
    return true // gone: its removal takes its documents
  }
}

/** `searchFile`, tried again while the file grows (at its new size); false when stopped. */
async function searchFileSettled (ctx: FeedContext, file: FileToRead, stopped: () => boolean): Promise<boolean> {
  for (let tries = 0; tries < READ_TRIES; tries++) {
    if (stopped()) return false
    if (await searchFile(ctx, tries === 0 ? file : { ...file, size: undefined }).catch(() => true)) return true
  }
  return true
}

/**
 * Files to read into the index one after another, in the background. Stopped with files left,
 * it hands each of them to `cut` (the store has the next start read them again).
 */
export class SearchBackfill {
  readonly #ctx: FeedContext
  readonly #stopped: () => boolean
  readonly #cut: (file: FileToRead) => void
  readonly #queue: FileToRead[] = []
  #running: Promise<void> | undefined
  #whole = true

  constructor (ctx: FeedContext, stopped: () => boolean, cut: (file: FileToRead) => void) {
    this.#ctx = ctx
    this.#stopped = stopped
    this.#cut = cut
  }

  add (file: FileToRead): void {
    this.#queue.push(file)
    this.#start()
  }

  /** Runs through the queue; a file added while a run was ending starts the next run. */
  #start (): void {
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined
      if (this.#queue.length > 0) this.#start()
    })
  }

  /** Resolves once every file added was read, true, or reading stopped, false. */
  async idle (): Promise<boolean> {
    while (this.#running !== undefined) await this.#running
    return this.#whole
  }

  async #run (): Promise<void> {
    // Taken by position, not `shift`: a start can find a hundred thousand files, and each shift moves the rest.
    for (let at = 0; at < this.#queue.length; at++) {
      if (await searchFileSettled(this.#ctx, this.#queue[at] as FileToRead, this.#stopped)) continue
      this.#whole = false
      for (const file of this.#queue.slice(at)) this.#cut(file)
      break
    }
    this.#queue.length = 0
  }
}

/**
 * Builds the search index from every saved session file of `files` (the index was emptied
 * before: jsonl-store.ts), `progress` told as files are read. Stops early when `stopped()` says
 * so; resolves true when it read every file.
 */
export async function rebuildSearch (ctx: FeedContext, files: readonly FileToRead[], stopped: () => boolean, progress: (done: number, total: number) => void): Promise<boolean> {
  progress(0, files.length)
  for (let i = 0; i < files.length; i++) {
    if (!await searchFileSettled(ctx, files[i] as FileToRead, stopped)) return false
    if ((i + 1) % 100 === 0 || i + 1 === files.length) progress(i + 1, files.length)
  }
  await ctx.search.flushed()
  return !stopped()
}
