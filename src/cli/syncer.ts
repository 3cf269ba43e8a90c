/**
 * The passes of `sync` over an agent's session directory: each file brought up to date
 * (sync-file.ts), its state saved after every step, deleted files forgotten (or, with
 * `--delete`, deleted on the server). A server that cannot take requests now (429, 502–504, no
 * connection) ends the pass; the caller waits, doubling the wait, and runs the next one.
 */
import { relative } from 'node:path'
import type { Logger } from 'pino'
import { isStoreError, type SessionStoreClient } from '../client/index.js'
import { isRetryableError, sleep } from '../client/retry.js'
import { sessionFiles } from './agent-files.js'
import { BlobSender } from './agent-blobs.js'
import { FileSync, type Outcome } from './sync-file.js'
import type { SyncState } from './sync-state.js'

export interface SyncerOptions {
  client: SessionStoreClient
  sessionsDir: string
  blobsDir: string
  state: SyncState
  log: Logger
  /** Delete the session on the server when its file is deleted. */
  deleteSessions: boolean
  signal: AbortSignal
}

/** The first and the longest wait after a pass the server could not take, in ms. */
export const BACKOFF_FIRST_MS = 1000
export const BACKOFF_MAX_MS = 30_000
/** The longest a file that failed on its own (a refused file) waits for its next try, in ms. */
const FILE_RETRY_MAX_MS = 5 * 60_000

/** The server cannot take requests now: the pass stops, to be run again after a wait. */
export class ServerUnavailable extends Error {
  override name = 'ServerUnavailable'
}

/** True for an answer or a failure that says "later": 429, 502, 503, 504, or no connection. */
export function isUnavailable (err: unknown): boolean {
  return isStoreError(err, 429) || isStoreError(err, 502) || isStoreError(err, 503) || isStoreError(err, 504) || isRetryableError(err)
}

export interface FileReport { file: string, id?: string, outcome?: Outcome, appended: number, error?: unknown }

export class Syncer {
  readonly #o: SyncerOptions
  readonly #files: FileSync
  readonly #following = new Set<string>()
  readonly #retries = new Map<string, { at: number, waitMs: number }>()

  constructor (options: SyncerOptions) {
    this.#o = options
    this.#files = new FileSync(options.client, new BlobSender(options.client, options.blobsDir))
  }

  /** The session files of the directory now. */
  async files (): Promise<string[]> { return await sessionFiles(this.#o.sessionsDir) }

  /**
   * Brings one file up to date and saves the state. A file the server refuses is reported (and
   * tried again later, after a growing wait); an unavailable server throws `ServerUnavailable`.
   */
  async syncFile (file: string, now = Date.now()): Promise<FileReport> {
    const { state, log } = this.#o
    const retry = this.#retries.get(file)
    if (retry !== undefined && retry.at > now) return { file, appended: 0 }
    const rel = relative(this.#o.sessionsDir, file)
    try {
      const result = await this.#files.step(file, state.get(file))
      this.#retries.delete(file)
      if (result.state === undefined) return { file, outcome: result.outcome, appended: 0 }
      state.set(file, result.state)
      await state.save()
      if (!this.#following.has(file)) {
        this.#following.add(file)
        log.info({ sessionId: result.state.id, file: rel }, 'following session')
      }
      if (result.outcome !== 'unchanged') log.debug({ sessionId: result.state.id, file: rel, outcome: result.outcome, appended: result.appended }, 'session synced')
      return { file, id: result.state.id, outcome: result.outcome, appended: result.appended }
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ENOENT') return { file, appended: 0 }
      if (isUnavailable(err)) throw new ServerUnavailable('the server cannot take requests now', { cause: err })
      const waitMs = Math.min(FILE_RETRY_MAX_MS, (retry?.waitMs ?? BACKOFF_FIRST_MS / 2) * 2)
      this.#retries.set(file, { at: now + waitMs, waitMs })
      log.warn({ err, file: rel, retryInMs: waitMs }, 'session not synced')
      return { file, appended: 0, error: err }
    }
  }

  /** Forgets the files that are gone; with `deleteSessions`, deletes their sessions unless another file holds them (a move). */
  async forgetDeleted (present: readonly string[]): Promise<void> {
    const { state, log, client } = this.#o
    const here = new Set(present)
    const heldIds = new Set(present.map((f) => state.get(f)?.id).filter((id) => id !== undefined))
    for (const file of state.files()) {
      if (here.has(file)) continue
      const id = state.get(file)!.id
      const moved = heldIds.has(id)
      if (this.#o.deleteSessions && !moved) {
        try {
          await client.deleteSession(id)
        } catch (err) {
          if (isUnavailable(err)) throw new ServerUnavailable('the server cannot take requests now', { cause: err })
          if (!isStoreError(err, 404)) throw err
        }
      }
      state.delete(file)
      await state.save()
      this.#following.delete(file)
      this.#retries.delete(file)
      log.info({ sessionId: id, file: relative(this.#o.sessionsDir, file), deleted: this.#o.deleteSessions && !moved }, 'stopped following session')
    }
  }

  /** One pass over every file, then the deleted ones. */
  async pass (): Promise<void> {
    const files = await this.files()
    for (const file of files) {
      if (this.#o.signal.aborted) return
      await this.syncFile(file)
    }
    await this.forgetDeleted(files)
  }

  /** Runs passes every `intervalMs` until the signal aborts; waits (doubling) while the server is unavailable. */
  async follow (intervalMs: number): Promise<void> {
    const { signal, log } = this.#o
    let waitMs = 0
    while (!signal.aborted) {
      try {
        await this.pass()
        waitMs = 0
      } catch (err) {
        if (!(err instanceof ServerUnavailable)) throw err
        waitMs = Math.min(BACKOFF_MAX_MS, waitMs === 0 ? BACKOFF_FIRST_MS : waitMs * 2)
        log.warn({ err: err.cause, retryInMs: waitMs }, 'server unavailable')
      }
      try {
        await sleep(waitMs === 0 ? intervalMs : waitMs, signal)
      } catch {
        return
      }
    }
  }
}
