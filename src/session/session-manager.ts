/**
 * One session held in memory, bound to a file when persisting (SPEC.md §6): the model
 * (session-model.ts) plus persistence. Every `append*` is synchronous: memory changes at once and
 * disk work is queued (§8). Lifecycle operations that
 * replace the session live in `session-lifecycle.ts`; the factories in `session-factories.ts`.
 */
import { join } from 'node:path'
import type { SessionStorage } from '../storage/types.js'
import { writeBreadcrumb } from './breadcrumbs.js'
import { sessionFileName } from './cwd.js'
import { createSessionId, nowIso } from './ids.js'
import { rememberJson } from './json-text.js'
import type { ManagerEnv, ManagerParts } from './manager-parts.js'
import { SessionModel } from './session-model.js'
import type { FileRecord, SessionEntryBase } from './types.js'
import { WriteQueue } from './write-queue.js'
import * as factories from './session-factories.js'
import type { CreateOptions, ManagerOptions } from './session-factories.js'
import * as lifecycle from './session-lifecycle.js'

export type { ManagerEnv }

export type { NewEntryFields } from './session-model.js'

export class SessionManager extends SessionModel implements ManagerParts {
  /** @internal shared with session-lifecycle.ts and session-factories.ts */
  readonly env: ManagerEnv
  /** @internal */
  readonly queue: WriteQueue
  /** @internal */
  sessionFile: string | undefined
  /** @internal */
  sessionDir: string
  /** @internal */
  cwd: string
  /** @internal */
  sessionName: string | undefined
  /** @internal The file exists or its first flush is queued (§1.2 "flushed"). */
  flushed = false

  // ── Factories (§6.2); implemented in session-factories.ts ─────────────────

  /** A new session in memory, deferred until its first assistant message; writes no file. */
  static create (cwd: string, sessionDir?: string, storage?: SessionStorage, options?: CreateOptions): Promise<SessionManager> {
    return factories.create(make, cwd, sessionDir, storage, options)
  }

  /** Loads (migrating if needed) or creates the session file at `path` (§5.3). */
  static open (path: string, sessionDir?: string, storage?: SessionStorage, options?: ManagerOptions): Promise<SessionManager> {
    return factories.open(make, path, sessionDir, storage, options)
  }

  /** Resumes the terminal's or the newest session of `cwd`, else starts a new one (§11.3). */
  static continueRecent (cwd: string, sessionDir?: string, storage?: SessionStorage, options?: ManagerOptions): Promise<SessionManager> {
    return factories.continueRecent(make, cwd, sessionDir, storage, options)
  }

  /** A manager that never writes. */
  static inMemory (cwd?: string, storage?: SessionStorage, options?: ManagerOptions): SessionManager {
    return factories.inMemory(make, cwd, storage, options)
  }

  /** Copies another session file (all branches, ids kept) into a new session of `cwd`. */
  static forkFrom (sourcePath: string, cwd: string, sessionDir?: string, storage?: SessionStorage, options?: ManagerOptions): Promise<SessionManager> {
    return factories.forkFrom(make, sourcePath, cwd, sessionDir, storage, options)
  }

  /** @internal use the factories above. */
  constructor (env: ManagerEnv, cwd: string, sessionDir: string) {
    super([])
    this.env = env
    this.cwd = cwd
    this.sessionDir = sessionDir
    this.queue = new WriteQueue(env.storage, env.blobs, env.log)
    this.startFresh()
  }

  /**
   * Replaces the session with a new, empty one: new UUIDv7 (or `id`), header `{type, version: 3, id,
   * timestamp, cwd}` (+ `parentSession`), leaf `null`, not flushed, path in `sessionDir`.
   * @internal
   */
  startFresh (parentSession?: string, path?: string, id = createSessionId()): void {
    const timestamp = nowIso()
    const header: FileRecord = { type: 'session', version: 3, id, timestamp, cwd: this.cwd }
    if (parentSession !== undefined) header.parentSession = parentSession
    this.state.replace([header])
    this.sessionName = undefined
    this.flushed = false
    this.sessionFile = this.env.persist ? (path ?? join(this.sessionDir, sessionFileName(timestamp, id))) : undefined
  }

  /** @internal writes the breadcrumb of this manager's terminal, if it has one. */
  async breadcrumb (): Promise<void> {
    const { terminalId, persist, storage, dataDir, log } = this.env
    if (!persist || terminalId === undefined || this.sessionFile === undefined) return
    await writeBreadcrumb(storage, dataDir, terminalId, this.cwd, this.sessionFile, log)
  }

  /** §8.7: a latched error is thrown before anything changes. */
  protected override beforeChange (): void {
    this.queue.throwIfLatched()
  }

  /** Hands a new entry to the persistence pipeline: incremental, first flush, or deferred (§8.3). */
  protected override afterAppend (entry: SessionEntryBase): void {
    if (this.sessionFile === undefined) return
    // Its stored line is this text when nothing in it is rewritten (persist-transform.ts), and
    // the answer to the append repeats it: written once for both.
    if (this.flushed || this.state.hasAssistant) rememberText(entry)
    if (this.flushed) {
      this.queue.appendLines(this.sessionFile, [entry])
    } else if (this.state.hasAssistant) {
      this.flushed = true
      this.queue.appendLines(this.sessionFile, this.state.records)
    }
  }

  getSessionFile (): string | undefined { return this.sessionFile }
  getSessionDir (): string { return this.sessionDir }
  getCwd (): string { return this.cwd }
  getSessionName (): string | undefined { return this.sessionName }
  isPersisted (): boolean { return this.env.persist }
  /** The file exists or its first flush is queued: appends become durable after `flush()`. */
  isFlushed (): boolean { return this.flushed }
  getLatchedError (): Error | undefined { return this.queue.latched }

  // ── Lifecycle (§6.3); implemented in session-lifecycle.ts ─────────────────

  /** Binds to `path` and loads it (or creates a fresh session there); clears the latch. */
  setSessionFile (path: string): Promise<void> { return lifecycle.setSessionFile(this, path) }
  /** Starts a new deferred session in the current directory; returns its path. */
  newSession (options?: { parentSession?: string }): Promise<string | undefined> { return lifecycle.newSession(this, options) }
  /** Copies the session to a new id and file, written at once; `undefined` in memory. */
  fork (): Promise<{ oldSessionFile: string, newSessionFile: string } | undefined> { return lifecycle.fork(this) }
  /** Replaces the session with the path root→`leafId` as a new session. */
  createBranchedSession (leafId: string): Promise<string | undefined> { return lifecycle.createBranchedSession(this, leafId) }
  /** Moves the session to the directory of `newCwd` (§6.3 "move"). */
  moveTo (newCwd: string): Promise<void> { return lifecycle.moveTo(this, newCwd) }

  // ── Metadata, flush and close (§6.3, §6.7) ──────────────────────────────────

  async setSessionName (name: string): Promise<void> {
    this.queue.throwIfLatched()
    this.sessionName = name
    this.state.header.title = name
    if (this.sessionFile !== undefined && this.flushed) await this.queue.rewrite(this.sessionFile, this.state.records)
  }

  async rewriteEntries (): Promise<void> {
    this.queue.throwIfLatched()
    if (this.sessionFile === undefined) return
    this.flushed = true
    await this.queue.rewrite(this.sessionFile, this.state.records)
  }

  /** Waits for every queued write, makes appended bytes durable, throws the latched error. */
  flush (): Promise<void> { return this.queue.flush() }

  /** `flush()`, then closes the writer; a later append reopens it. */
  close (): Promise<void> { return this.queue.close() }
}

/** `rememberJson(entry)`; a text that cannot be made is left to the write to report. */
function rememberText (entry: SessionEntryBase): void {
  try {
    rememberJson(entry)
  } catch {
    // The write task makes the line itself and latches the error.
  }
}

/** How the factories make a manager of this class. */
function make (env: ManagerEnv, cwd: string, sessionDir: string): SessionManager {
  return new SessionManager(env, cwd, sessionDir)
}
