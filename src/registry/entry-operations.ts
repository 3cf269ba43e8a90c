/**
 * The Entries operations of the registry (API.md "Entries"): paging, single reads, batch
 * appends with group commit and idempotency, leaf moves, branch summaries, tree, branch and
 * context. Reads take no lock; appends go through the session's group commit (append-commit.ts).
 */
import { createHash } from 'node:crypto'
import { EntryNotFound, IdempotencyKeyReused } from '../errors.js'
import type { SessionContext, SessionEntryBase } from '../session/types.js'
import { answerJson, AppendQueue, type AppendJob, type Committed } from './append-commit.js'
import { holdsImageBlock, prepareAppendBlobs } from './append-blobs.js'
import { applyBlobMode } from './blob-refs.js'
import { parseAppendBody, validateAppend, type AppendRequest } from './new-entries.js'
import type { OpenSession } from './open-session.js'
import type { RegistryCore } from './registry-core.js'
import type { AppendAnswer, BlobMode, EntriesPage, Tagged, TreeView } from './types.js'
import { assertUnsavedFits, batchBytes, isAssistantMessage } from './unsaved-bounds.js'

export interface AppendOptions {
  ifMatch?: string
  idempotencyKey?: string
  blobs?: BlobMode
  /** The request body's length in bytes, when known (counted against memory bounds). */
  bytes?: number
}

/** The group commit of each open session. */
const queues = new WeakMap<OpenSession, AppendQueue>()

/** Submits a job to `session`'s group commit (every append of a session goes through one); resolves with its answer once stored. */
export function submit (core: RegistryCore, session: OpenSession, job: Omit<AppendJob, 'resolve' | 'reject'>): Promise<Committed> {
  let queue = queues.get(session)
  if (queue === undefined) queues.set(session, queue = new AppendQueue())
  const target = queue
  return new Promise((resolve, reject) => { target.submit(core, session, { ...job, resolve, reject }) })
}

/** Runs the synchronous read `fn` and tags its value with the etag of the state it read. */
async function read<T> (core: RegistryCore, id: string, fn: (session: OpenSession) => T): Promise<Tagged<T>> {
  return await core.use(id, (session) => ({ value: fn(session), etag: core.etag(session) }))
}

export async function entriesPage (core: RegistryCore, id: string, after: number, limit: number, blobs?: BlobMode): Promise<Tagged<EntriesPage>> {
  return await read(core, id, (session) => {
    const m = session.model
    const total = m.entryCount()
    const entries = after >= total ? [] : m.entriesSlice(after, after + limit)
    const end = after + entries.length
    return { entries: applyBlobMode(entries, blobs), after, next: end < total ? end : null, total }
  })
}

export async function getEntry (core: RegistryCore, id: string, entryId: string, blobs?: BlobMode): Promise<Tagged<SessionEntryBase>> {
  return await read(core, id, (session) => {
    const entry = session.model.getEntry(entryId)
    if (entry === undefined) throw new EntryNotFound(entryId)
    return applyBlobMode(entry, blobs)
  })
}

/**
 * Appends a batch atomically: validated whole, then every entry appended (contiguous seq), then
 * stored with the session's group commit. With an Idempotency-Key, a request whose key is in
 * flight or answered gets that answer again (`replayed`), or 422 for another body.
 */
export async function append (core: RegistryCore, id: string, body: unknown, options: AppendOptions): Promise<AppendAnswer> {
  const request = parseAppendBody(body)
  const key = options.idempotencyKey
  const bodyHash = key === undefined ? '' : createHash('sha256').update(JSON.stringify(body)).digest('hex')
  const { result, etag, replayed, texts } = await core.use(id, async (session): Promise<Committed> => {
    const prior = key === undefined ? undefined : session.inFlight.get(key)
    if (prior !== undefined) {
      if (prior.bodyHash !== bodyHash) throw new IdempotencyKeyReused()
      return { ...await prior.result, replayed: true }
    }
    if (request.entries.some(holdsImageBlock)) await prepareAppendBlobs(request.entries, core.blobs, core.log)
    const answer = submit(core, session, {
      key: key === undefined ? undefined : { key, bodyHash },
      apply: (s) => { appendRequest(core, s, request, options) },
    })
    if (key === undefined) return await answer
    const held = { bodyHash, result: answer }
    session.inFlight.set(key, held)
    try {
      return await answer
    } finally {
      if (session.inFlight.get(key) === held) session.inFlight.delete(key)
    }
  }, options.ifMatch !== undefined) // `If-Match` is checked against the session as stored now
  const entries = applyBlobMode(result.entries, options.blobs)
  const json = texts === undefined ? undefined : answerJson(result, entries, texts)
  return { result: entries === result.entries ? result : { ...result, entries }, etag, replayed, json }
}

/** Checks `request` against the session, then appends it to the model. */
function appendRequest (core: RegistryCore, session: OpenSession, request: AppendRequest, options: AppendOptions): void {
  core.assertIfMatch(session, options.ifMatch)
  const m = session.model
  validateAppend(request, (entryId) => m.getEntry(entryId) !== undefined)
  if (!request.entries.some(isAssistantMessage)) {
    assertUnsavedFits(core.limits, session, request.entries.length, batchBytes(request.entries, options.bytes))
  }
  if (request.parentId === null) m.resetLeaf()
  else if (request.parentId !== undefined) m.branch(request.parentId)
  for (const entry of request.entries) m.appendEntry(entry)
}

/** The answer to `PUT leaf`. */
export interface LeafMoved {
  leafId: string | null
  etag: string
  /**
   * True when the move is stored (an empty branch summary marks it) and survives a restart;
   * false when it is held in memory only: a restart or an eviction reloads the session at its
   * last entry in file order (SPEC.md §6.1), as the agents' readers do.
   */
  durable: boolean
}

/** The `details.kind` of the empty branch summary that records a durable leaf move. */
export const LEAF_MOVE_MARKER = 'leaf-move'

/**
 * `PUT leaf`: moves the leaf (`null` = before the first entry). With `durable`, it does what the
 * agents do to make a move survive a reload: it appends, under the target, an empty
 * `branch_summary` (which adds nothing to the context) and answers with that entry as the leaf.
 */
export async function setLeaf (core: RegistryCore, id: string, leafId: string | null, ifMatch?: string, durable = false): Promise<LeafMoved> {
  if (durable) {
    const { value, etag } = await appendBranchSummary(core, id, { fromId: leafId, summary: '', details: { kind: LEAF_MOVE_MARKER } }, ifMatch)
    return { leafId: value.leafId, etag, durable: value.persisted }
  }
  return await core.exclusive(id, ifMatch, (session) => {
    const m = session.model
    if (leafId === null) m.resetLeaf()
    else m.branch(leafId)
    core.bumpRevision(session)
    core.emit(id, { type: 'leaf', leafId: m.getLeafId() })
    return { leafId: m.getLeafId(), etag: core.etag(session), durable: false }
  })
}

export interface BranchSummaryInput {
  fromId: string | null
  summary: string
  details?: unknown
  fromExtension?: boolean
}

/** `POST branch-summary`: `branchWithSummary`, stored before it answers. */
export async function branchSummary (core: RegistryCore, id: string, input: BranchSummaryInput, ifMatch?: string, blobs?: BlobMode): Promise<Tagged<{ entry: SessionEntryBase, leafId: string | null }>> {
  const { value: { entry, leafId }, etag } = await appendBranchSummary(core, id, input, ifMatch, blobs)
  return { value: { entry, leafId }, etag }
}

/** `branchSummary`, also telling whether the summary is durable (false: held under deferral). */
async function appendBranchSummary (core: RegistryCore, id: string, input: BranchSummaryInput, ifMatch?: string, blobs?: BlobMode): Promise<Tagged<{ entry: SessionEntryBase, leafId: string | null, persisted: boolean }>> {
  const { result, etag } = await core.use(id, async (session) => await submit(core, session, {
    apply: (s) => {
      core.assertIfMatch(s, ifMatch)
      const m = s.model
      if (input.fromId !== null && m.getEntry(input.fromId) === undefined) throw new EntryNotFound(input.fromId)
      assertUnsavedFits(core.limits, s, 1, batchBytes([input]))
      m.branchWithSummary(input.fromId, input.summary, input.details, input.fromExtension)
    },
  }), ifMatch !== undefined)
  return { value: { entry: applyBlobMode(result.entries[0] as SessionEntryBase, blobs), leafId: result.leafId, persisted: result.persisted }, etag }
}

export async function tree (core: RegistryCore, id: string): Promise<Tagged<TreeView>> {
  return await read(core, id, (session) => ({ leafId: session.model.getLeafId(), nodes: session.model.getFlatTree() }))
}

/** Root → `leafId` (default: the current leaf); `[]` for an unknown `leafId` (SPEC.md §6.6 `getBranch`). */
export async function branch (core: RegistryCore, id: string, leafId?: string, blobs?: BlobMode): Promise<Tagged<SessionEntryBase[]>> {
  return await read(core, id, (session) => applyBlobMode(session.model.getBranch(leafId), blobs))
}

/** The context at `leafId` (default: the current leaf; unknown ids fall back, SPEC.md §7.2). */
export async function context (core: RegistryCore, id: string, leafId?: string, blobs?: BlobMode): Promise<Tagged<SessionContext>> {
  return await read(core, id, (session) => applyBlobMode(session.model.buildSessionContext(leafId), blobs))
}

/** Visible entries (see `OpenSession.visibleCount`) after `after`, at most `max`, loading the session if needed. */
export async function readVisible (core: RegistryCore, id: string, after: number, max: number): Promise<SessionEntryBase[]> {
  return readVisibleNow(core, id, after, max) ?? await core.use(id, (session) => visibleSlice(session, after, max))
}

/**
 * `readVisible` of a loaded session, read synchronously (every live stream calls this once per
 * append). Undefined when the session is not loaded or was deleted.
 */
export function readVisibleNow (core: RegistryCore, id: string, after: number, max: number): SessionEntryBase[] | undefined {
  const loaded = core.open.peek(id)
  return loaded !== undefined && !loaded.deleted ? visibleSlice(loaded, after, max) : undefined
}

function visibleSlice (session: OpenSession, after: number, max: number): SessionEntryBase[] {
  const end = Math.min(session.visibleCount(), after + max)
  return end > after ? session.model.entriesSlice(after, end) : []
}
