/**
 * The storage seam of the service: one asynchronous store per backend, below the registry, the
 * same for every backend and with no optional members (STYLE.md §8). The registry knows sessions
 * by tenant and id; how a store keeps them is its own affair:
 * - disk and memory (jsonl/): SPEC.md's JSONL files through `SessionStorage` (§10), with an
 *   embedded index for listings;
 * - PostgreSQL (postgres/): the session log itself, rows of lines, and its wake-up bus.
 *
 * "Durable" means `fdatasync` on disk (and nothing on memory) and `COMMIT` on PostgreSQL.
 * A missing record is `undefined`, never a throw.
 */
import type { SearchTerm } from '../search/query.js'

export type { SearchTerm }

/**
 * A session's place in its store's history: every stored change of the session makes it larger.
 * Opaque to callers; they compare it with what a journal holds.
 */
export type Version = number

/**
 * A session as listings show it (API.md "SessionInfo", with `modified` as a number); the
 * registry computes it, the store keeps it with each change and answers listings with it.
 */
export interface ListingItem {
  id: string
  cwd: string
  title?: string
  parentSession?: string
  created: string
  /** The last change, epoch ms with a fraction: two changes in one millisecond still sort in order. */
  modifiedMs: number
  messageCount: number
  firstMessage: string
  entryCount: number
}

/** A listing query (API.md `GET /v1/sessions`): newest first, by keyset. */
export interface ListQuery {
  /** Only sessions whose header `cwd` is exactly this. */
  cwd?: string
  /** Also sessions without any `message` entry. */
  includeEmpty: boolean
  /** Items after this one in the listing order (the previous page's last). */
  after?: ListKey
  limit: number
}

/** The sort key of a listing: `modified` descending, then id ascending. */
export interface ListKey {
  /** `modified`, epoch milliseconds. */
  modifiedMs: number
  id: string
}

export interface ListPage {
  items: ListingItem[]
  /** True when more items follow the last one. */
  more: boolean
}

/** One item of `recent` (API.md "RecentSession"; SPEC.md §11.2 names it from a 4096-byte prefix). */
export interface RecentItem {
  id: string
  name: string
  modifiedMs: number
}

/** An appended line and the id of the entry it holds (`null` for a record that is no entry). */
export interface StoredLine {
  id: string | null
  /** One JSONL line, without its `"\n"`. */
  line: string
}

/** The first answer to an append sent with an `Idempotency-Key`, kept with its lines. */
export interface KeptAnswer {
  key: string
  /** SHA-256 (hex) of the request body. */
  bodyHash: string
  /** The answer as JSON text. */
  answer: string
}

/** A whole new session, stored at once: header first, as its JSONL text holds it. */
export interface NewSession {
  id: string
  /** Every line of the session's text, the header (or an agent's title line before it) first. */
  lines: readonly StoredLine[]
  /**
   * False for a session under SPEC.md §8.3's deferral (no assistant message yet): disk keeps it in
   * memory only, with no file; PostgreSQL keeps it as a row with a flag.
   */
  saved: boolean
  /** The last line lacks its `"\n"` (a torn append kept as the file holds it). */
  torn?: boolean
  info: ListingItem
}

/** A session read from its store, with the journal that writes it from that state on. */
export interface LoadedSession {
  /** The stored text, in pieces whose concatenation is the whole text; read it once. */
  text: AsyncIterable<string>
  /** Bytes of the stored text. */
  size: number
  /** The last change, epoch ms. */
  modifiedMs: number
  journal: Journal
}

/** A session's stored text, to send as it is read (an export). */
export interface StoredText {
  /** The text in pieces whose concatenation is the whole text; read it once. */
  text: AsyncIterable<string>
  /** Bytes of the text. */
  size: number
}

/** What happened to a session since a journal's version, as `Journal` outcomes report it. */
export type Newer =
  /** Only lines were appended: these, in order. */
  | { kind: 'appended', lines: string[] }
  /** It was replaced or its header changed: read it again whole. */
  | { kind: 'replaced' }
  /** It no longer exists. */
  | { kind: 'removed' }

/**
 * What a journal write did: `ok`, or nothing because the session moved on (`stale`: the journal
 * now holds the newer version, `newer` says what changed), or, for an append, nothing because
 * keys of it were answered already (`answered`: key → the kept answer).
 */
export type WriteOutcome =
  | { ok: true }
  | { ok: false, stale: Newer }
  | { ok: false, answered: ReadonlyMap<string, KeptAnswer> }

/** An append of whole lines at the journal's version. */
export interface AppendBatch {
  lines: readonly StoredLine[]
  /** The session is saved from this append on (the first flush of SPEC.md §8.3), or already. */
  save: boolean
  /** The session's listing item after the append. */
  info: ListingItem
  /** Answers to keep with these lines; an append whose key is answered already writes nothing. */
  answers: readonly KeptAnswer[]
}

/**
 * One open session's durable log. Writes run one at a time, in call order; each is applied only
 * if the stored session is still at the journal's version, and moves the version on.
 */
export interface Journal {
  /** The version of the session as this journal last read or wrote it. */
  readonly version: Version
  /** The session has been saved (a file on disk, a row without the unsaved flag). */
  readonly saved: boolean
  /** Appends the lines; resolves once they are durable (unsaved on disk: once held in memory). */
  append(batch: AppendBatch): Promise<WriteOutcome>
  /**
   * Replaces the header line (and an agent's title line before it), keeping every later line
   * byte for byte; atomic (temp + fsync + rename + directory fsync on disk, one transaction in
   * PostgreSQL). A changed `cwd` in `info` moves the session (on disk, to its new directory).
   */
  rewriteHeader(header: string, info: ListingItem): Promise<WriteOutcome>
  /** Replaces the whole session atomically with `lines` (a migration on load). */
  replace(lines: readonly StoredLine[], info: ListingItem): Promise<WriteOutcome>
  /**
   * What changed since the journal's version (moving the journal on to the newest one), or
   * `undefined` when nothing did.
   */
  refresh(): Promise<Newer | undefined>
  /** Removes the session and its answers; stale when it changed since the journal's version. */
  remove(): Promise<WriteOutcome>
  /** Releases what the journal holds (a file handle); an unsaved session on disk is forgotten. */
  close(): Promise<void>
}

/** The session a terminal last used (SPEC.md §11.3), by id. */
export interface Breadcrumb {
  terminalId: string
  cwd: string
  id: string
}

/** A change another process made (a store several processes share reports these). */
export interface StoreChange {
  tenant: string
  id: string
  version: Version
  kind: 'created' | 'appended' | 'replaced' | 'removed'
  /** A removed session's last listing item, when the change could carry it. */
  item?: ListingItem
  /**
   * Found when the store looked again after its feed was cut (notifications sent meanwhile are
   * lost): the session changed while nothing was heard, maybe long before `version`.
   */
  resync?: boolean
}

/** What a tenant's sessions take (`GET /v1/usage`, quotas). */
export interface SessionUsage {
  /** Sessions, saved and unsaved. */
  sessions: number
  /** Bytes of their stored text (an unsaved session on disk counts what its creation stored). */
  bytes: number
}

/** What `runAlone` did: ran `work` (and what it answered), or nothing because the name was held. */
export type AloneOutcome<T> = { ran: true, value: T } | { ran: false }

/**
 * The marks of a line that may spell a blob ref (SPEC.md §9.5): the ref's own `sha256:`, or a
 * JSON escape (`\u…`) that could spell it. `refLines` answers no other line.
 */
export const REF_MARKS: readonly string[] = ['sha256:', '\\u']
/**
 * A search of a tenant's sessions (README "Search"): every term must match, excluded ones must
 * not; best match first, then newest.
 */
export interface SearchQuery {
  terms: readonly SearchTerm[]
  /** Only sessions whose header `cwd` is exactly this. */
  cwd?: string
  /** Also the thinking of assistant messages. */
  thinking: boolean
  /** Hits of earlier pages, skipped. */
  offset: number
  limit: number
}

/** One entry (or a session's title, `entryId` null) that matches a search. */
export interface SearchHit {
  sessionId: string
  entryId: string | null
  /** The entry's type (`session` for a title). */
  type: string
  /** The role of a `message` entry, else null. */
  role: string | null
  /** The entry's timestamp as stored. */
  timestamp: string
  /** The session's title and cwd now (its listing item). */
  title?: string
  cwd: string
  /** Text around the matches, each between `«` and `»` (src/search/text.ts). */
  snippet: string
  /** How well it matches, higher is better; comparable within one search only. */
  score: number
}

export interface SearchPage {
  hits: SearchHit[]
  /** True when more hits follow the last one. */
  more: boolean
}

/** How far a rebuild of the search index has come: `done` of `total` (sessions on disk, lines on PostgreSQL). */
export type ReindexProgress = (done: number, total: number) => void

export interface SessionStore {
  /** The session `id` of `tenant`, with a journal at the version read; `undefined` when none. */
  load(tenant: string, id: string): Promise<LoadedSession | undefined>
  /** The stored text of a saved session, `undefined` when none. */
  read(tenant: string, id: string): Promise<StoredText | undefined>
  /**
   * Stores a new session and opens its journal.
   * @throws SessionExists when the tenant has a session of that id (saved or not).
   */
  create(tenant: string, session: NewSession): Promise<Journal>
  list(tenant: string, query: ListQuery): Promise<ListPage>
  /** The listing item of one session, `undefined` when none. */
  info(tenant: string, id: string): Promise<ListingItem | undefined>
  /** Sessions of `cwd` (header `cwd`), newest first, unsaved ones included. */
  recent(tenant: string, cwd: string, limit: number): Promise<RecentItem[]>
  /**
   * The session `continue` resumes in `cwd` (SPEC.md §11.3): the one `terminalId`'s breadcrumb
   * names when it was recorded for `cwd` and is saved, else the newest saved session of `cwd`.
   */
  continueTarget(tenant: string, cwd: string, terminalId?: string): Promise<string | undefined>
  /** Records `id` as the session `terminalId` last used in `cwd`; best effort. */
  setBreadcrumb(tenant: string, terminalId: string, cwd: string, id: string): Promise<void>
  /** Every breadcrumb of `tenant` that names a saved session. */
  breadcrumbs(tenant: string): Promise<Breadcrumb[]>
  /** Every tenant that holds a session (and, where the store keeps them, blobs). */
  tenants(): Promise<string[]>
  /**
   * Every stored line of `tenant`'s sessions that holds one of `REF_MARKS`, headers included,
   * saved and unsaved sessions alike (the lines of an unsaved session on disk are in memory),
   * each once, in no order. Lines stored while this is read may or may not show: a collection
   * keeps what is put meanwhile by its grace period (src/hygiene/blob-gc.ts).
   */
  refLines(tenant: string): AsyncIterable<string>
  /** How many sessions `tenant` has and the bytes of their stored text. */
  usage(tenant: string): Promise<SessionUsage>
  /**
   * Runs `work` unless `name` is held (by this process or, for a store several servers share,
   * by any of them), holding it until `work` settles.
   */
  runAlone<T>(name: string, work: () => Promise<T>): Promise<AloneOutcome<T>>
  /** Calls `listener` with each change another process makes; returns the stop function. */
  follow(listener: (change: StoreChange) => void): () => void
  /**
   * Searches the text of `tenant`'s sessions (src/search/extract.ts says which). The index
   * follows every durable change within a bounded lag (the `ss_search_lag_seconds` gauge); a
   * removed session's hits are gone at once.
   */
  search(tenant: string, query: SearchQuery): Promise<SearchPage>
  /** Builds the search index anew from the stored sessions, of every tenant; resolves once it holds them all. */
  reindex(progress: ReindexProgress): Promise<void>
  /** True when the store takes writes now (readiness). */
  writable(): Promise<boolean>
  close(): Promise<void>
}
