/**
 * What the registry hands to the HTTP layer (API.md "Sessions", "Entries", "Live stream").
 * Plain data: the route schemas in `routes/*.schema.ts` describe exactly these shapes.
 */
import type { SessionContext, SessionEntryBase, SessionHeader } from '../session/types.js'
import type { FlatTreeNode } from '../session/tree.js'

/** API.md "Session". */
export interface SessionView {
  /** The stored header object verbatim. */
  header: SessionHeader
  leafId: string | null
  entryCount: number
  messageCount: number
  /** False while the session is held in memory under the deferral rule (SPEC.md §8.3). */
  persisted: boolean
  /** ISO 8601 instant of the last change. */
  modified: string
  /** Quoted, opaque; also the `ETag` header. */
  etag: string
}

/** API.md "SessionInfo" (listing item). */
export interface SessionInfoView {
  id: string
  cwd: string
  title?: string
  parentSession?: string
  created: string
  modified: string
  messageCount: number
  firstMessage: string
  entryCount: number
}

/** API.md "RecentSession". */
export interface RecentSessionView {
  id: string
  name: string
  modified: string
}

export interface SessionList {
  sessions: SessionInfoView[]
  nextCursor: string | null
}

/** README "Search": one hit. */
export interface SearchHitView {
  sessionId: string
  entryId: string | null
  type: string
  role: string | null
  timestamp: string
  title: string | null
  cwd: string
  /** Matches between `«` and `»`. */
  snippet: string
  score: number
}

export interface SearchResults {
  hits: SearchHitView[]
  nextCursor: string | null
}

export interface EntriesPage {
  entries: SessionEntryBase[]
  after: number
  next: number | null
  total: number
}

export interface AppendResult {
  entries: SessionEntryBase[]
  leafId: string | null
  firstSeq: number
  lastSeq: number
  /** Every entry of the batch is on disk and fsynced. */
  persisted: boolean
}

/** An append as answered: the result body and the session's etag right after the batch. */
export interface Appended {
  result: AppendResult
  etag: string
}

/** What `append` answers: `replayed` for an earlier answer to the same Idempotency-Key and body. */
export interface AppendAnswer extends Appended {
  replayed: boolean
  /** `JSON.stringify(result)`, when it was made along the way: sent as it is. */
  json?: string
}

/** A value read from one session, with the session's etag at the moment it was read. */
export interface Tagged<T> {
  value: T
  /** The session's etag when `value` was read; sent as the `ETag` header. */
  etag: string
}

export interface TreeView {
  leafId: string | null
  nodes: FlatTreeNode[]
}

export type { SessionContext, SessionEntryBase, FlatTreeNode }

/** `inline` (default): image data as base64; `ref`: `blob:sha256:<hex>` refs as stored. */
export type BlobMode = 'inline' | 'ref'

/** Events of one session, for its SSE subscribers. */
export type SessionEvent =
  | { type: 'append' }
  | { type: 'leaf', leafId: string | null }
  | { type: 'session', session: SessionView }
  | { type: 'deleted', id: string }

/** Events of every session, for `GET /v1/events`. */
export interface GlobalEvent {
  type: 'session-created' | 'session-updated' | 'session-deleted'
  info: SessionInfoView
  /** The SSE `id:`, for `Last-Event-ID` resumes. */
  id: string
}

/** A session's text to send: its length in bytes and its bytes, read as they are sent. */
export interface ExportStream {
  size: number
  chunks: Iterable<Buffer> | AsyncIterable<Buffer>
  /** Releases what reading holds when the chunks are not read. */
  close: () => Promise<void>
}
