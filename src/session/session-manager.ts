/**
 * One session held in memory, bound to a file when persisting (SPEC.md §6). Every `append*` is
 * synchronous: memory changes at once and disk work is queued (§8). Lifecycle operations that
 * replace the session live in `session-lifecycle.ts`; the factories in `session-factories.ts`.
 */
import { join } from 'node:path'
import type { BlobStore } from '../blobs/types.js'
import { EntryNotFound } from '../errors.js'
import type { SessionStorage } from '../storage/types.js'
import { checkNewEntry } from './append-rules.js'
import { writeBreadcrumb } from './breadcrumbs.js'
import { buildSessionContext } from './context.js'
import { setOwnField } from './guards.js'
import { sessionFileName } from './cwd.js'
import { createSessionId, nowIso } from './ids.js'
import { rememberJson } from './json-text.js'
import type { Logger } from './logger.js'
import { SessionState } from './session-state.js'
import { buildTree, flatTree, getChildren, type FlatTreeNode } from './tree.js'
import type {
  AgentMessage, EntryType, FileRecord, SessionContext, SessionEntryBase, SessionHeader, SessionTreeNode,
} from './types.js'
import { WriteQueue } from './write-queue.js'
import * as factories from './session-factories.js'
import type { CreateOptions, ManagerOptions } from './session-factories.js'
import * as lifecycle from './session-lifecycle.js'

/** What a manager needs from its surroundings, resolved once by the factories. */
export interface ManagerEnv {
  /** Absolute `DATA_DIR`; every client-derived path must resolve inside it (§2.1). */
  dataDir: string
  storage: SessionStorage
  blobs: BlobStore
  log: Logger
  /** Client-supplied terminal id; enables breadcrumbs (§11.3). */
  terminalId?: string
  /** False for `inMemory` managers: nothing is ever written. */
  persist: boolean
}

/** A new entry as the generic append takes it: a type plus its fields, no id/parentId/timestamp. */
export type NewEntryFields = { type: EntryType | string } & Record<string, unknown>

export class SessionManager {
  /** @internal shared with session-lifecycle.ts and session-factories.ts */
  readonly env: ManagerEnv
  /** @internal */
  state: SessionState
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
    return factories.create(cwd, sessionDir, storage, options)
  }

  /**
   * A second session made from `source` the way `source.fork()` (or, with `leafId`,
   * `createBranchedSession(leafId)`) would, leaving `source` untouched.
   */
  static forkCopy (source: SessionManager, leafId?: string): Promise<SessionManager> {
    return factories.forkCopy(source, leafId)
  }

  /** Loads (migrating if needed) or creates the session file at `path` (§5.3). */
  static open (path: string, sessionDir?: string, storage?: SessionStorage, options?: ManagerOptions): Promise<SessionManager> {
    return factories.open(path, sessionDir, storage, options)
  }

  /** Resumes the terminal's or the newest session of `cwd`, else starts a new one (§11.3). */
  static continueRecent (cwd: string, sessionDir?: string, storage?: SessionStorage, options?: ManagerOptions): Promise<SessionManager> {
    return factories.continueRecent(cwd, sessionDir, storage, options)
  }

  /** A manager that never writes. */
  static inMemory (cwd?: string, storage?: SessionStorage, options?: ManagerOptions): SessionManager {
    return factories.inMemory(cwd, storage, options)
  }

  /** Copies another session file (all branches, ids kept) into a new session of `cwd`. */
  static forkFrom (sourcePath: string, cwd: string, sessionDir?: string, storage?: SessionStorage, options?: ManagerOptions): Promise<SessionManager> {
    return factories.forkFrom(sourcePath, cwd, sessionDir, storage, options)
  }

  /** @internal use the factories above. */
  constructor (env: ManagerEnv, cwd: string, sessionDir: string) {
    this.env = env
    this.cwd = cwd
    this.sessionDir = sessionDir
    this.queue = new WriteQueue(env.storage, env.blobs, env.log)
    this.state = new SessionState([])
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

  // ── Appends (§6.4) ──────────────────────────────────────────────────────────

  /**
   * Appends one entry of any type with the checks and defaults of its typed method; extra keys
   * are kept. Throws the latched error (or a validation error) before changing anything.
   * Returns the new entry id.
   */
  appendEntry (fields: NewEntryFields): string {
    this.queue.throwIfLatched()
    const checked = checkNewEntry(fields, (id) => this.state.byId.has(id))
    const entry = { type: checked.type, id: this.state.newEntryId(), parentId: this.state.leafId, timestamp: nowIso() } as SessionEntryBase
    // The other fields follow in their own order (an object spread, without its slow path).
    for (const key of Object.keys(checked)) {
      if (key !== 'type' && key !== 'id' && key !== 'parentId' && key !== 'timestamp') setOwnField(entry, key, checked[key])
    }
    this.state.add(entry)
    this.#persistAppend(entry)
    return entry.id
  }

  appendMessage (message: AgentMessage): string {
    return this.appendEntry({ type: 'message', message })
  }

  appendThinkingLevelChange (thinkingLevel?: string | null): string {
    return this.appendEntry({ type: 'thinking_level_change', thinkingLevel })
  }

  appendModelChange (model: string, role?: string): string {
    return this.appendEntry({ type: 'model_change', model, role })
  }

  appendCompaction (summary: string, shortSummary: string | undefined, firstKeptEntryId: string | undefined,
    tokensBefore: number, details?: unknown, fromExtension?: boolean, preserveData?: Record<string, unknown>): string {
    return this.appendEntry({
      type: 'compaction', summary, shortSummary, firstKeptEntryId, tokensBefore, details, preserveData, fromExtension,
    })
  }

  appendCustomEntry (customType: string, data?: unknown): string {
    return this.appendEntry({ type: 'custom', customType, data })
  }

  appendCustomMessageEntry (customType: string, content: string | unknown[], display: boolean, details?: unknown,
    attribution: 'user' | 'agent' = 'agent'): string {
    return this.appendEntry({ type: 'custom_message', customType, content, display, details, attribution })
  }

  appendLabelChange (targetId: string, label?: string): string {
    return this.appendEntry({ type: 'label', targetId, label })
  }

  appendTtsrInjection (ruleNames: string[]): string {
    return this.appendEntry({ type: 'ttsr_injection', injectedRules: ruleNames })
  }

  appendSessionInit (init: { systemPrompt: string, task: string, tools: string[], outputSchema?: unknown }): string {
    return this.appendEntry({ type: 'session_init', ...init })
  }

  appendModeChange (mode: string, data?: Record<string, unknown>): string {
    return this.appendEntry({ type: 'mode_change', mode, data })
  }

  /** Hands a new entry to the persistence pipeline: incremental, first flush, or deferred (§8.3). */
  #persistAppend (entry: SessionEntryBase): void {
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

  // ── Navigation (§6.5) ───────────────────────────────────────────────────────

  branch (entryId: string): void {
    if (!this.state.byId.has(entryId)) throw new EntryNotFound(entryId)
    this.state.leafId = entryId
  }

  resetLeaf (): void {
    this.state.leafId = null
  }

  branchWithSummary (fromId: string | null, summary: string, details?: unknown, fromExtension?: boolean): string {
    this.queue.throwIfLatched()
    if (fromId !== null && !this.state.byId.has(fromId)) throw new EntryNotFound(fromId)
    const previous = this.state.leafId
    this.state.leafId = fromId
    try {
      return this.appendEntry({ type: 'branch_summary', fromId: fromId ?? 'root', summary, details, fromExtension })
    } catch (err) {
      this.state.leafId = previous
      throw err
    }
  }

  // ── Reads (§6.6) ────────────────────────────────────────────────────────────

  getLeafId (): string | null { return this.state.leafId }
  getLeafEntry (): SessionEntryBase | undefined {
    return this.state.leafId === null ? undefined : this.state.byId.get(this.state.leafId)
  }

  getEntry (id: string): SessionEntryBase | undefined { return this.state.byId.get(id) }
  /** Every entry in file order (opaque records excluded); a new array. */
  getEntries (): SessionEntryBase[] { return [...this.state.entries] }
  /** Number of entries; `seq` of an entry is its 1-based position among them. */
  entryCount (): number { return this.state.entries.length }
  /** Entries `[start, end)` in file order, without copying the whole list. */
  entriesSlice (start: number, end: number): SessionEntryBase[] { return this.state.entries.slice(start, end) }
  getHeader (): SessionHeader { return this.state.header }

  getBranch (fromId?: string): SessionEntryBase[] {
    const id = fromId ?? this.state.leafId
    const leaf = id === null ? undefined : this.state.byId.get(id)
    return leaf === undefined ? [] : this.state.pathTo(leaf)
  }

  getChildren (parentId: string): SessionEntryBase[] { return getChildren(this.state.entries, parentId) }
  getLabel (id: string): string | undefined { return this.state.labels.get(id) }
  /** Target id → current label, in the order targets became labelled. */
  labels (): ReadonlyMap<string, string> { return this.state.labels }
  /** The id index (later duplicates win, §5.4). */
  index (): ReadonlyMap<string, SessionEntryBase> { return this.state.byId }
  getTree (): SessionTreeNode[] {
    return buildTree(this.state.entries, this.state.byId, this.state.labels, this.state.parentPositions())
  }

  /** The tree as flat nodes in file order, children as ids (what `GET /tree` serves). */
  getFlatTree (): FlatTreeNode[] {
    return flatTree(this.state.entries, this.state.byId, this.state.labels, this.state.parentPositions())
  }

  /** The context of the current leaf, or of `leafId` when given (unknown ids fall back, §7.2). */
  buildSessionContext (leafId?: string | null): SessionContext {
    const leaf = leafId === undefined ? this.state.leafId : leafId
    return buildSessionContext(this.state.entries, leaf, this.state.byId, (entry) => this.state.pathTo(entry))
  }

  getSessionId (): string { return this.state.header.id }
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
