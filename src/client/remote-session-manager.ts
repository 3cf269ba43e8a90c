/**
 * The `SessionManager` API (SPEC.md §6) against a server: the same methods and parameters as
 * the local manager in src/session/session-manager.ts, each returning a promise. The server
 * holds the session, its leaf and its file; this object holds only the session id, so every
 * read is fresh and several managers (or processes) can work on one session.
 *
 * Differences that follow from the HTTP contract: there are no file paths, so `fork`,
 * `createBranchedSession` and `newSession` resolve to session ids; `flush`/`close` are not
 * needed (an append resolves once the server has made it durable or deferred it, API.md).
 */
import type { SessionStoreClient } from './client.js'
import { isStoreError } from './errors.js'
import { RemoteAppends } from './remote-appends.js'
import type { AppendResult, Entry, NewEntry, Session, SessionContext, SessionHeader } from './types.js'
import { buildIndex, buildLabelMap, buildTree, getChildren } from '../session/tree.js'
import type { SessionEntryBase, SessionTreeNode } from '../session/types.js'

/** Options of `RemoteSessionManager.create` (API.md `POST /v1/sessions`). */
export interface RemoteCreateOptions {
  title?: string
  /** Header `parentSession`: an opaque lineage marker. */
  parentSession?: string
  /** A client-chosen id (`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`); default a new UUIDv7. */
  id?: string
}

/** The context of a `null` leaf (SPEC.md §7.1). */
const emptyContext = (): SessionContext => ({ messages: [], thinkingLevel: 'off', models: {}, injectedTtsrRules: [], mode: 'none' })

/** Entries as the pure tree functions of the model take them (the server sends every base field). */
const asModel = (entries: Entry[]): SessionEntryBase[] => entries as SessionEntryBase[]

export class RemoteSessionManager extends RemoteAppends {
  readonly #client: SessionStoreClient
  #id: string

  /** Use the factories. */
  private constructor (client: SessionStoreClient, id: string) {
    super()
    this.#client = client
    this.#id = id
  }

  // ── Factories ───────────────────────────────────────────────────────────────

  /** A new session of `cwd`, held by the server in memory until its first assistant message. */
  static async create (client: SessionStoreClient, cwd: string, options: RemoteCreateOptions = {}): Promise<RemoteSessionManager> {
    const session = await client.createSession({ cwd, ...options })
    return new RemoteSessionManager(client, session.header.id)
  }

  /** An existing session; rejects with `SessionStoreError` 404 when there is none. */
  static async open (client: SessionStoreClient, sessionId: string): Promise<RemoteSessionManager> {
    const session = await client.getSession(sessionId)
    return new RemoteSessionManager(client, session.header.id)
  }

  /** The terminal's or the newest session of `cwd`, else a new one (SPEC.md §11.3). */
  static async continueRecent (client: SessionStoreClient, cwd: string, options: { terminalId?: string } = {}): Promise<RemoteSessionManager> {
    const { session } = await client.continueSession({ cwd, ...options })
    return new RemoteSessionManager(client, session.header.id)
  }

  /** A session file of any version, migrated; keeps its id unless `newId` (then a `forkFrom` copy). */
  static async import (client: SessionStoreClient, jsonl: string, options: { newId?: boolean } = {}): Promise<RemoteSessionManager> {
    const session = await client.importSession(jsonl, options)
    return new RemoteSessionManager(client, session.header.id)
  }

  /** The id of the session this manager works on; changes with `fork`, `createBranchedSession`, `newSession`. */
  get sessionId (): string { return this.#id }

  // ── Appends (SPEC.md §6.4) ──────────────────────────────────────────────────

  /** Appends one entry under the current leaf (retried safely under one Idempotency-Key). */
  async appendEntry (entry: NewEntry): Promise<string> {
    const result = await this.#client.append(this.#id, entry)
    return (result.entries[0] as Entry).id
  }

  /** Appends an atomic batch; `parentId` is the parent of the first entry (`null`: a new root). */
  async appendEntries (entries: readonly NewEntry[], options: { parentId?: string | null } = {}): Promise<AppendResult> {
    return await this.#client.append(this.#id, entries, options)
  }

  // ── Navigation (SPEC.md §6.5) ───────────────────────────────────────────────

  /** Moves the leaf; rejects with code `SS_ENTRY_NOT_FOUND` for an unknown id. */
  async branch (entryId: string): Promise<void> {
    await this.#client.setLeaf(this.#id, entryId)
  }

  /** Sets the leaf to `null`: the next append creates a new root. */
  async resetLeaf (): Promise<void> {
    await this.#client.setLeaf(this.#id, null)
  }

  async branchWithSummary (fromId: string | null, summary: string, details?: unknown, fromExtension?: boolean): Promise<string> {
    const { entry } = await this.#client.branchSummary(this.#id, { fromId, summary, details, fromExtension })
    return entry.id
  }

  // ── Reads (SPEC.md §6.6) ────────────────────────────────────────────────────

  /** Header and state as the server reports them, with the current `etag`. */
  async getSession (): Promise<Session> { return await this.#client.getSession(this.#id) }
  async getLeafId (): Promise<string | null> { return (await this.getSession()).leafId }

  async getLeafEntry (): Promise<Entry | undefined> {
    const leafId = await this.getLeafId()
    return leafId === null ? undefined : await this.getEntry(leafId)
  }

  /** The entry, or `undefined` when the session has none with this id. */
  async getEntry (id: string): Promise<Entry | undefined> {
    try {
      return await this.#client.getEntry(this.#id, id)
    } catch (err) {
      if (isStoreError(err, 404, 'SS_ENTRY_NOT_FOUND')) return undefined
      throw err
    }
  }

  /** Every entry in file (seq) order. */
  async getEntries (): Promise<Entry[]> { return await this.#client.allEntries(this.#id) }
  async entryCount (): Promise<number> { return (await this.getSession()).entryCount }
  async getHeader (): Promise<SessionHeader> { return (await this.getSession()).header }

  /** Root → `fromId` (default: the leaf); `[]` when the leaf is `null` or the id is unknown. */
  async getBranch (fromId?: string): Promise<Entry[]> {
    try {
      return await this.#client.getBranch(this.#id, { leafId: fromId })
    } catch (err) {
      if (fromId !== undefined && isStoreError(err, 404, 'SS_ENTRY_NOT_FOUND')) return []
      throw err
    }
  }

  /** Entries whose `parentId` is `parentId`, in file order. */
  async getChildren (parentId: string): Promise<Entry[]> {
    return getChildren(asModel(await this.getEntries()), parentId) as Entry[]
  }

  async getLabel (id: string): Promise<string | undefined> {
    const { nodes } = await this.#client.getTree(this.#id)
    return nodes.find((node) => node.id === id)?.label
  }

  /** Target id → current label, in the order targets became labelled. */
  async labels (): Promise<ReadonlyMap<string, string>> {
    return buildLabelMap(asModel(await this.getEntries()))
  }

  /** The tree as nested nodes with their entries, exactly as the local `getTree()` builds it. */
  async getTree (): Promise<SessionTreeNode[]> {
    const entries = asModel(await this.getEntries())
    return buildTree(entries, buildIndex(entries), buildLabelMap(entries))
  }

  /** The context at the current leaf, or at `leafId` (`null`: empty; unknown ids fall back, §7.2). */
  async buildSessionContext (leafId?: string | null): Promise<SessionContext> {
    if (leafId === null) return emptyContext()
    return await this.#client.getContext(this.#id, { leafId })
  }

  async getSessionId (): Promise<string> { return this.#id }
  async getCwd (): Promise<string> { return String((await this.getHeader()).cwd) }
  async getSessionName (): Promise<string | undefined> { return (await this.getHeader()).title }

  // ── Metadata and lifecycle (SPEC.md §6.3, §6.7) ─────────────────────────────

  async setSessionName (name: string): Promise<void> {
    await this.#client.renameSession(this.#id, name)
  }

  /** Moves the session to the directory of `newCwd`. */
  async moveTo (newCwd: string): Promise<void> {
    await this.#client.moveSession(this.#id, newCwd)
  }

  /** Copies the session (every entry) to a new id and works on the copy from now on. */
  async fork (): Promise<{ oldSessionId: string, newSessionId: string }> {
    const oldSessionId = this.#id
    this.#id = (await this.#client.forkSession(oldSessionId)).header.id
    return { oldSessionId, newSessionId: this.#id }
  }

  /** Copies root→`leafId` into a new session and works on it from now on; resolves to its id. */
  async createBranchedSession (leafId: string): Promise<string> {
    this.#id = (await this.#client.forkSession(this.#id, { leafId })).header.id
    return this.#id
  }

  /** Starts a new session in the same cwd and works on it from now on; resolves to its id. */
  async newSession (options: { parentSession?: string } = {}): Promise<string> {
    const session = await this.#client.createSession({ cwd: await this.getCwd(), ...options })
    this.#id = session.header.id
    return this.#id
  }

  /** The stored JSONL file. */
  async exportJsonl (): Promise<string> { return await this.#client.exportSession(this.#id) }

  /** Deletes the session on the server. */
  async delete (): Promise<void> { await this.#client.deleteSession(this.#id) }
}
