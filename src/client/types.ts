/**
 * The shapes of the HTTP contract (API.md), taken from the TypeBox schemas the routes validate
 * and serialize with. Type-only imports: nothing of the server is loaded at run time.
 */
import type { Static, TObject } from '@sinclair/typebox'
import type {
  BlobsQuery, SessionContext as ContextSchema, AppendEntries, BranchSummary,
  GetEntries, GetTree, PutLeaf, TreeNode as TreeNodeSchema
} from '../../routes/entries.schema.js'
import type { OtherEntry as EntrySchema } from '../../routes/entry-types.schema.js'
import type { PostBlob } from '../../routes/blobs.schema.js'
import type { GcReport as GcReportSchema, Usage as UsageSchema } from '../../routes/hygiene.schema.js'
import type { AgentRecord as AgentRecordSchema, RecordsResult as RecordsResultSchema } from '../../routes/records.schema.js'
import type { SearchHit as SearchHitSchema, SearchSessions } from '../../routes/search.schema.js'
import type {
  ContinueSession, CreateSession, ListSessions, RecentSessions, RecentSession as RecentSessionSchema,
  Session as SessionSchema, SessionInfo as SessionInfoSchema, StoredSessionHeader,
} from '../../routes/sessions.schema.js'
import type { Problem as ProblemSchema } from '../errors.js'
import type { AgentMessage, EntryType, entryFields } from '../session/types.js'

export type { AgentMessage }

/** The body of every error answer (`application/problem+json`). */
export type Problem = Static<typeof ProblemSchema>

/** The stored header object verbatim (unknown keys kept). */
export type SessionHeader = Static<typeof StoredSessionHeader> & Record<string, unknown>
/** API.md "Session": header and state; `etag` changes with every mutation. */
export type Session = Omit<Static<typeof SessionSchema>, 'header'> & { header: SessionHeader }
/** API.md "SessionInfo": one listing item. */
export type SessionInfo = Static<typeof SessionInfoSchema>
/** API.md "RecentSession". */
export type RecentSession = Static<typeof RecentSessionSchema>
export type SessionList = Static<(typeof ListSessions.response)[200]>
export type ListSessionsQuery = Static<typeof ListSessions.querystring>
export type CreateSessionInput = Static<typeof CreateSession.body>
export type ContinueSessionInput = Static<typeof ContinueSession.body>
export type RecentSessionsQuery = Static<typeof RecentSessions.querystring>
/** README "Search": one hit, its matches between `«` and `»` in `snippet`. */
export type SearchHit = Static<typeof SearchHitSchema>
export type SearchResults = Static<(typeof SearchSessions.response)[200]>
/** `GET /v1/search` without `q`. */
export type SearchOptions = Omit<Static<typeof SearchSessions.querystring>, 'q'>

/** Any stored entry: base fields plus its type's fields (unknown keys kept). */
export type Entry = Static<typeof EntrySchema> & Record<string, unknown>
/**
 * The fields of one entry type (SPEC.md §3.5), from the model's own `entryFields`; a message
 * keeps every field of the agent message, not only `role`, `content` and `timestamp`.
 */
export type EntryFields<K extends EntryType> = K extends 'message' ? { message: AgentMessage } : Static<TObject<(typeof entryFields)[K]>>
/** An entry as appended: any entry type of SPEC.md §3.5 without `id`, `parentId`, `timestamp`. */
export type NewEntry = { [K in EntryType]: { type: K } & EntryFields<K> & Record<string, unknown> }[EntryType]
export type EntriesPage = Omit<Static<(typeof GetEntries.response)[200]>, 'entries'> & { entries: Entry[] }
export type AppendResult = Omit<Static<(typeof AppendEntries.response)[201]>, 'entries'> & { entries: Entry[] }
/** An entry as an agent wrote it: its own `id`, `parentId` and `timestamp`, every other key kept. */
export type AgentRecord = Static<typeof AgentRecordSchema> & Record<string, unknown>
/** The answer to `appendRecords`. */
export type RecordsResult = Static<typeof RecordsResultSchema>
export type LeafMove = Static<(typeof PutLeaf.response)[200]>
export type BranchSummaryInput = Static<typeof BranchSummary.body>
export type BranchSummaryResult = { entry: Entry, leafId: string | null }
export type TreeNode = Static<typeof TreeNodeSchema>
export type TreeView = Static<(typeof GetTree.response)[200]>
/** What the model receives (SPEC.md §7.1). */
export type SessionContext = Omit<Static<typeof ContextSchema>, 'messages'> & { messages: AgentMessage[] }
/** `inline` (default): image data as base64; `ref`: `blob:sha256:<hex>` refs as stored. */
export type BlobMode = NonNullable<Static<typeof BlobsQuery>>
/** A stored blob: its SHA-256 (64 lowercase hex), its ref, and its size in bytes. */
export type BlobInfo = Static<(typeof PostBlob.response)[201]>
/** What a collection of the tenant's unreferenced blobs found and did. */
export type GcReport = Static<typeof GcReportSchema>
/** What the tenant stores, its quotas and its retention. */
export type Usage = Static<typeof UsageSchema>

/** Options of `createClient`. */
export interface ClientOptions {
  /** Where the server listens, e.g. `http://127.0.0.1:8787`; a path prefix is kept. */
  baseUrl: string | URL
  /** Most connections to the server at once (default 32); each open subscription holds one. */
  connections?: number
  /** Per attempt: time to the response headers, and longest pause within a body, in ms (default 30000). */
  timeoutMs?: number
  /** Extra attempts of a retryable call (default 3); 0 turns retries off. */
  retries?: number
  /** First retry delay in ms (default 100); doubles per attempt, with jitter, up to 5000. */
  retryDelayMs?: number
  /** Sent with every request (e.g. `authorization`). */
  headers?: Record<string, string>
}

/** Per-call options of the calls that accept them. */
export interface CallOptions {
  signal?: AbortSignal
}

/** Options of mutating calls: `ifMatch` makes a stale etag fail with 412. */
export interface MutationOptions extends CallOptions {
  ifMatch?: string
}
