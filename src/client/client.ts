/**
 * A typed client for every route of API.md, over one keep-alive undici `Pool`. A non-2xx answer
 * throws `SessionStoreError`. GET, HEAD, PUT and DELETE are retried on connection failures and
 * 502/503/504; appends are retried too, because each logical append carries one
 * `Idempotency-Key` across its attempts; no other POST (nor PATCH) is retried.
 */
import { randomUUID } from 'node:crypto'
import { globalEvents, seg, sessionEvents, type GlobalStreamEvent, type SessionStreamEvent, type SubscribeOptions } from './subscriptions.js'
import { Transport } from './transport.js'
import type {
  AgentRecord, AppendResult, BlobInfo, BlobMode, BranchSummaryInput, BranchSummaryResult, CallOptions, ClientOptions,
  ContinueSessionInput, CreateSessionInput, EntriesPage, Entry, GcReport, LeafMove, ListSessionsQuery, MutationOptions,
  NewEntry, RecentSession, RecordsResult, SearchOptions, SearchResults, Session, SessionContext, SessionList, TreeView,
  Usage,
} from './types.js'

/** Options of `append`. */
export interface AppendOptions extends MutationOptions {
  /** Parent of the first entry: an entry id, `null` for a new root; default the current leaf. */
  parentId?: string | null
  /** Default: a new random UUID per call, reused by its retries. */
  idempotencyKey?: string
  blobs?: BlobMode
}

/** Options of the reads that take a leaf: default the session's current leaf. */
export interface LeafReadOptions extends CallOptions {
  leafId?: string
  blobs?: BlobMode
}

/** Largest page the server serves (API.md "Entries"). */
const MAX_PAGE = 1000

const sessionPath = (id: string): string => `/v1/sessions/${seg(id)}`
const blobPath = (hash: string): string => `/v1/blobs/sha256/${seg(hash)}`

export class SessionStoreClient {
  readonly #http: Transport
  readonly #retries: number

  constructor (options: ClientOptions) {
    this.#http = new Transport(options)
    this.#retries = options.retries ?? 3
  }

  /** Ends open subscriptions, then closes the connection pool once the requests in flight have finished. */
  async close (): Promise<void> { await this.#http.close() }

  // ── Health ──────────────────────────────────────────────────────────────────

  /** `GET /healthz`: resolves while the server process runs. */
  async health (options: CallOptions = {}): Promise<{ status: 'ok' }> {
    return await this.#http.json({ method: 'GET', path: '/healthz', signal: options.signal })
  }

  /** `GET /readyz`: true when storage is writable; false on 503 (asked once, not retried). */
  async isReady (options: CallOptions = {}): Promise<boolean> {
    const res = await this.#http.send({ method: 'GET', path: '/readyz', idempotent: false, accept: [503], signal: options.signal })
    return res.status === 200
  }

  // ── Sessions ────────────────────────────────────────────────────────────────

  /** `POST /v1/sessions`: a new session, held in memory until its first assistant message. */
  async createSession (input: CreateSessionInput, options: CallOptions = {}): Promise<Session> {
    return await this.#http.json({ method: 'POST', path: '/v1/sessions', json: input, signal: options.signal })
  }

  /** `GET /v1/sessions`: newest first; follow `nextCursor` for the next page. */
  async listSessions (query: ListSessionsQuery = {}, options: CallOptions = {}): Promise<SessionList> {
    return await this.#http.json({ method: 'GET', path: '/v1/sessions', query: { ...query }, signal: options.signal })
  }

  /** `GET /v1/search`: hits of `q` in the caller's sessions, best match first, then newest; follow `nextCursor` for the next page. */
  async search (q: string, query: SearchOptions = {}, options: CallOptions = {}): Promise<SearchResults> {
    return await this.#http.json({ method: 'GET', path: '/v1/search', query: { ...query, q }, signal: options.signal })
  }

  /** `GET /v1/sessions/recent`: the most recent sessions of `cwd` (default 3). */
  async recentSessions (cwd: string, limit?: number, options: CallOptions = {}): Promise<RecentSession[]> {
    const query = { cwd, limit }
    const res = await this.#http.json<{ sessions: RecentSession[] }>({ method: 'GET', path: '/v1/sessions/recent', query, signal: options.signal })
    return res.sessions
  }

  /** `POST /v1/sessions/continue`: the terminal's or newest session of `cwd`, else a new one (`created`). */
  async continueSession (input: ContinueSessionInput, options: CallOptions = {}): Promise<{ session: Session, created: boolean }> {
    const res = await this.#http.send({ method: 'POST', path: '/v1/sessions/continue', json: input, signal: options.signal })
    return { session: JSON.parse(res.body.toString('utf8')) as Session, created: res.status === 201 }
  }

  /** `GET /v1/sessions/{id}`. */
  async getSession (id: string, options: CallOptions = {}): Promise<Session> {
    return await this.#http.json({ method: 'GET', path: sessionPath(id), signal: options.signal })
  }

  /** `PATCH /v1/sessions/{id}`: sets the title. */
  async renameSession (id: string, title: string, options: MutationOptions = {}): Promise<Session> {
    return await this.#mutate('PATCH', sessionPath(id), { title }, options)
  }

  /** `POST /v1/sessions/{id}/move`: moves the session to the directory of `cwd`. */
  async moveSession (id: string, cwd: string, options: MutationOptions = {}): Promise<Session> {
    return await this.#mutate('POST', `${sessionPath(id)}/move`, { cwd }, options)
  }

  /** `POST /v1/sessions/{id}/fork`: a copy of every entry or, with `leafId`, of root→leafId. */
  async forkSession (id: string, options: MutationOptions & { leafId?: string } = {}): Promise<Session> {
    const body = options.leafId === undefined ? {} : { leafId: options.leafId }
    return await this.#mutate('POST', `${sessionPath(id)}/fork`, body, options)
  }

  /** `POST /v1/sessions/import`: a session file of any version; keeps its id unless `newId`. */
  async importSession (jsonl: string, options: CallOptions & { newId?: boolean } = {}): Promise<Session> {
    return await this.#http.json({
      method: 'POST',
      path: '/v1/sessions/import',
      query: { newId: options.newId },
      raw: { body: jsonl, contentType: 'application/x-ndjson' },
      signal: options.signal,
    })
  }

  /** `GET /v1/sessions/{id}/export`: the stored JSONL file; `images: 'inline'` with its blob refs resolved. */
  async exportSession (id: string, options: CallOptions & { images?: 'ref' | 'inline' } = {}): Promise<string> {
    const res = await this.#http.send({ method: 'GET', path: `${sessionPath(id)}/export`, query: { images: options.images }, signal: options.signal })
    return res.body.toString('utf8')
  }

  /** `DELETE /v1/sessions/{id}`. */
  async deleteSession (id: string, options: MutationOptions = {}): Promise<void> {
    await this.#http.send({ method: 'DELETE', path: sessionPath(id), headers: { 'if-match': options.ifMatch }, signal: options.signal })
  }

  // ── Entries ─────────────────────────────────────────────────────────────────

  /** `GET /v1/sessions/{id}/entries`: entry `i` of the page has `seq = after + i + 1`. */
  async getEntries (id: string, query: { after?: number, limit?: number, blobs?: BlobMode } = {}, options: CallOptions = {}): Promise<EntriesPage> {
    return await this.#http.json({ method: 'GET', path: `${sessionPath(id)}/entries`, query: { ...query }, signal: options.signal })
  }

  /** Every entry of the session in seq order, read page by page. */
  async allEntries (id: string, options: CallOptions & { blobs?: BlobMode } = {}): Promise<Entry[]> {
    const out: Entry[] = []
    for (let after: number | null = 0; after !== null;) {
      const page: EntriesPage = await this.getEntries(id, { after, limit: MAX_PAGE, blobs: options.blobs }, options)
      out.push(...page.entries)
      after = page.next
    }
    return out
  }

  /** `GET /v1/sessions/{id}/entries/{entryId}`. */
  async getEntry (id: string, entryId: string, options: CallOptions & { blobs?: BlobMode } = {}): Promise<Entry> {
    const path = `${sessionPath(id)}/entries/${seg(entryId)}`
    return await this.#http.json({ method: 'GET', path, query: { blobs: options.blobs }, signal: options.signal })
  }

  /**
   * `POST /v1/sessions/{id}/entries`: appends one entry or an atomic batch. Sent with an
   * `Idempotency-Key`, so a retry after a lost answer never appends twice.
   */
  async append (id: string, entries: NewEntry | readonly NewEntry[], options: AppendOptions = {}): Promise<AppendResult> {
    const list = Array.isArray(entries) ? entries : [entries as NewEntry]
    const json = options.parentId === undefined ? { entries: list } : { entries: list, parentId: options.parentId }
    return await this.#http.json({
      method: 'POST',
      path: `${sessionPath(id)}/entries`,
      query: { blobs: options.blobs },
      json,
      headers: { 'idempotency-key': options.idempotencyKey ?? randomUUID(), 'if-match': options.ifMatch },
      idempotent: true,
      signal: options.signal,
    })
  }

  /**
   * `POST /v1/sessions/{id}/records`: entries as an agent wrote them, with their own `id`,
   * `parentId` and `timestamp`. The same record again is a no-op, so the call is retried as is.
   */
  async appendRecords (id: string, records: readonly AgentRecord[], options: MutationOptions & { idempotencyKey?: string } = {}): Promise<RecordsResult> {
    return await this.#http.json({
      method: 'POST',
      path: `${sessionPath(id)}/records`,
      json: { records },
      headers: { 'if-match': options.ifMatch, 'idempotency-key': options.idempotencyKey },
      idempotent: true,
      signal: options.signal,
    })
  }

  /**
   * `PUT /v1/sessions/{id}/file`: the session as the file `jsonl` says, created (`created`) or
   * replaced whole; `ifNoneMatch: '*'` only creates, `ifMatch` only replaces that version.
   */
  async replaceSessionFile (id: string, jsonl: string, options: MutationOptions & { ifNoneMatch?: '*' } = {}): Promise<{ session: Session, created: boolean }> {
    const res = await this.#http.send({
      method: 'PUT',
      path: `${sessionPath(id)}/file`,
      raw: { body: jsonl, contentType: 'application/x-ndjson' },
      headers: { 'if-match': options.ifMatch, 'if-none-match': options.ifNoneMatch },
      signal: options.signal,
    })
    return { session: JSON.parse(res.body.toString('utf8')) as Session, created: res.status === 201 }
  }

  /** `PUT /v1/sessions/{id}/leaf`: moves the leaf (`null`: before the first entry). */
  async setLeaf (id: string, leafId: string | null, options: MutationOptions = {}): Promise<LeafMove> {
    return await this.#mutate('PUT', `${sessionPath(id)}/leaf`, { leafId }, options)
  }

  /** `POST /v1/sessions/{id}/branch-summary`: moves the leaf to `fromId` and appends a summary there. */
  async branchSummary (id: string, input: BranchSummaryInput, options: MutationOptions & { blobs?: BlobMode } = {}): Promise<BranchSummaryResult> {
    return await this.#mutate('POST', `${sessionPath(id)}/branch-summary`, input, options, { blobs: options.blobs })
  }

  /** `GET /v1/sessions/{id}/tree`: flat nodes in file order. */
  async getTree (id: string, options: CallOptions = {}): Promise<TreeView> {
    return await this.#http.json({ method: 'GET', path: `${sessionPath(id)}/tree`, signal: options.signal })
  }

  /** `GET /v1/sessions/{id}/branch`: the path root→leafId. */
  async getBranch (id: string, options: LeafReadOptions = {}): Promise<Entry[]> {
    const query = { leafId: options.leafId, blobs: options.blobs }
    const res = await this.#http.json<{ entries: Entry[] }>({ method: 'GET', path: `${sessionPath(id)}/branch`, query, signal: options.signal })
    return res.entries
  }

  /** `GET /v1/sessions/{id}/context`: what the model receives at leafId. */
  async getContext (id: string, options: LeafReadOptions = {}): Promise<SessionContext> {
    const query = { leafId: options.leafId, blobs: options.blobs }
    return await this.#http.json({ method: 'GET', path: `${sessionPath(id)}/context`, query, signal: options.signal })
  }

  // ── Blobs ───────────────────────────────────────────────────────────────────

  /** `PUT /v1/blobs/sha256/{hash}`: stores bytes under their SHA-256; `created` is false when already stored. */
  async putBlob (hash: string, bytes: Uint8Array, options: CallOptions = {}): Promise<BlobInfo & { created: boolean }> {
    const raw = { body: bytes, contentType: 'application/octet-stream' }
    const res = await this.#http.send({ method: 'PUT', path: blobPath(hash), raw, signal: options.signal })
    return { ...(JSON.parse(res.body.toString('utf8')) as BlobInfo), created: res.status === 201 }
  }

  /** `POST /v1/blobs`: stores bytes and tells their hash. */
  async postBlob (bytes: Uint8Array, options: CallOptions = {}): Promise<BlobInfo> {
    const raw = { body: bytes, contentType: 'application/octet-stream' }
    return await this.#http.json({ method: 'POST', path: '/v1/blobs', raw, signal: options.signal })
  }

  /** `GET /v1/blobs/sha256/{hash}`: the bytes and the content type sniffed from them. */
  async getBlob (hash: string, options: CallOptions = {}): Promise<{ bytes: Buffer, contentType: string }> {
    const res = await this.#http.send({ method: 'GET', path: blobPath(hash), signal: options.signal })
    return { bytes: res.body, contentType: String(res.headers['content-type']) }
  }

  /** `HEAD /v1/blobs/sha256/{hash}`: whether the blob is stored. */
  async hasBlob (hash: string, options: CallOptions = {}): Promise<boolean> {
    const res = await this.#http.send({ method: 'HEAD', path: blobPath(hash), accept: [404], signal: options.signal })
    return res.status === 200
  }

  // ── Storage hygiene ─────────────────────────────────────────────────────────

  /** `POST /v1/blobs/gc` (admin): collects the tenant's unreferenced blobs now; `dryRun` removes nothing. */
  async collectBlobs (options: CallOptions & { dryRun?: boolean } = {}): Promise<GcReport> {
    return await this.#http.json({ method: 'POST', path: '/v1/blobs/gc', query: { dryRun: options.dryRun }, signal: options.signal })
  }

  /** `GET /v1/usage`: what the tenant stores, its quotas and its retention. */
  async getUsage (options: CallOptions = {}): Promise<Usage> {
    return await this.#http.json({ method: 'GET', path: '/v1/usage', signal: options.signal })
  }

  // ── Live streams ────────────────────────────────────────────────────────────

  /**
   * `GET /v1/sessions/{id}/events` as an async iterator that reconnects after drops with
   * `Last-Event-ID`, so every entry arrives exactly once in seq order. Ends after `deleted` or
   * when `signal` aborts.
   */
  subscribe (sessionId: string, options: SubscribeOptions = {}): AsyncGenerator<SessionStreamEvent> {
    return sessionEvents(this.#http, this.#retries, sessionId, options)
  }

  /** `GET /v1/events`: lifecycle events of every session; reconnects after drops. */
  subscribeAll (options: { signal?: AbortSignal } = {}): AsyncGenerator<GlobalStreamEvent> {
    return globalEvents(this.#http, this.#retries, options)
  }

  async #mutate<T> (method: 'PATCH' | 'POST' | 'PUT', path: string, json: unknown, options: MutationOptions, query?: { blobs?: BlobMode }): Promise<T> {
    return await this.#http.json({ method, path, json, query, headers: { 'if-match': options.ifMatch }, signal: options.signal })
  }
}

/** A client with its own connection pool; `close()` it when done. */
export function createClient (options: ClientOptions): SessionStoreClient {
  return new SessionStoreClient(options)
}
