/**
 * The Entries operations of the registry (API.md "Entries"): paging, single reads, batch
 * appends with group commit and idempotency, leaf moves, branch summaries, tree, branch and
 * context. Reads take no lock; every mutation runs under the session's lock.
 */
import { createHash } from 'node:crypto'
import { databaseOutage, EntryNotFound, IdempotencyKeyReused, SessionNotFound, StorageFailed } from '../errors.js'
import { stringifyJson } from '../session/json-text.js'
import type { SessionContext, SessionEntryBase } from '../session/types.js'
import { holdsImageBlock, prepareAppendBlobs } from './append-blobs.js'
import { applyBlobMode } from './blob-refs.js'
import { parseAppendBody, validateAppend, type AppendRequest } from './new-entries.js'
import type { OpenSession } from './open-session.js'
import type { RegistryCore } from './registry-core.js'
import type { AppendAnswer, Appended, AppendResult, BlobMode, EntriesPage, Tagged, TreeView } from './types.js'
import { assertUnsavedFits, batchBytes, isAssistantMessage } from './unsaved-bounds.js'
import { KeyClaim } from './shared-replays.js'
import { storeUnsaved } from './shared-unsaved.js'

export interface AppendOptions {
  ifMatch?: string
  idempotencyKey?: string
  blobs?: BlobMode
  /** The request body's length in bytes, when known (counted against memory bounds). */
  bytes?: number
}

/** Runs the synchronous read `fn` and tags its value with the etag of the state it read. */
async function read<T> (core: RegistryCore, id: string, fn: (slot: OpenSession) => T): Promise<Tagged<T>> {
  return await core.use(id, (slot) => ({ value: fn(slot), etag: core.etag(slot) }))
}

export async function entriesPage (core: RegistryCore, id: string, after: number, limit: number, blobs?: BlobMode): Promise<Tagged<EntriesPage>> {
  return await read(core, id, (slot) => {
    const m = slot.manager
    const total = m.entryCount()
    const entries = after >= total ? [] : m.entriesSlice(after, after + limit)
    const end = after + entries.length
    return { entries: applyBlobMode(entries, blobs), after, next: end < total ? end : null, total }
  })
}

export async function getEntry (core: RegistryCore, id: string, entryId: string, blobs?: BlobMode): Promise<Tagged<SessionEntryBase>> {
  return await read(core, id, (slot) => {
    const entry = slot.manager.getEntry(entryId)
    if (entry === undefined) throw new EntryNotFound(entryId)
    return applyBlobMode(entry, blobs)
  })
}

/**
 * Appends a batch atomically: validated whole, then every entry appended in one synchronous
 * run (contiguous seq), then made durable through the session's group commit. Returns the
 * result and whether it is a replay of an earlier request with the same Idempotency-Key.
 */
export async function append (core: RegistryCore, id: string, body: unknown, options: AppendOptions): Promise<AppendAnswer> {
  const request = parseAppendBody(body)
  const key = options.idempotencyKey
  const bodyHash = key === undefined ? '' : createHash('sha256').update(JSON.stringify(body)).digest('hex')
  // Without a key, or on a store of one process, there is no earlier answer to claim or keep:
  // no store call, no await.
  const claim = key === undefined || core.storage.replays === undefined ? undefined : new KeyClaim(core, key, bodyHash)
  try {
    return await core.use(id, async (slot) => {
      const earlier = claim === undefined ? undefined : await claim.take(slot)
      if (earlier !== undefined && 'kept' in earlier) {
        const { result, etag } = earlier.kept
        return { result: { ...result, entries: applyBlobMode(result.entries, options.blobs) }, etag, replayed: true }
      }
      let pending!: Promise<Committed>
      let replayed = earlier !== undefined
      if (earlier !== undefined) pending = earlier.inFlight.result
      else {
        if (request.entries.some(holdsImageBlock)) await prepareAppendBlobs(request.entries, core.blobs, core.log)
        // Synchronous: the batch is appended in one run, and the commit is awaited outside the lock.
        const queued = slot.lock.runSync(() => {
          if (slot.deleted) throw new SessionNotFound(id)
          const prior = key === undefined ? undefined : slot.idempotency.get(key)
          if (prior !== undefined) {
            if (prior.bodyHash !== bodyHash) throw new IdempotencyKeyReused()
            pending = prior.result
            replayed = true
            return
          }
          core.assertIfMatch(slot, options.ifMatch)
          const unsettled = appendNow(core, slot, request, options.bytes)
          // The entries are on their way to the store (as lines, or in the unsaved session) with
          // their answer, which is known now and kept with them.
          claim?.withLines({ result: settled(unsettled.result, slot.manager.isFlushed()), etag: unsettled.etag }, unsettled.result.entries.map((e) => e.id))
          pending = commitAppend(core, slot, unsettled)
          if (key === undefined) return
          const remembered = { bodyHash, result: pending }
          slot.idempotency.set(key, remembered)
          pending.catch(() => { if (slot.idempotency.get(key) === remembered) slot.idempotency.delete(key) })
        })
        if (queued !== undefined) await queued
      }
      const { result, etag, texts } = await pending
      if (claim !== undefined) await claim.keep({ result, etag })
      const entries = applyBlobMode(result.entries, options.blobs)
      const json = texts === undefined ? undefined : answerJson(result, entries, texts)
      return { result: entries === result.entries ? result : { ...result, entries }, etag, replayed, json }
    }, false) // not checked first: the store refuses an append to a session changed meanwhile, and it runs again
  } finally {
    if (claim !== undefined) await claim.release() // when it failed: the key is still held
  }
}

/** Validates and appends synchronously; nothing is appended when anything is invalid. */
function appendNow (core: RegistryCore, slot: OpenSession, request: AppendRequest, knownBytes?: number): Unsettled {
  const m = slot.manager
  throwIfLatched(slot)
  validateAppend(request, (entryId) => m.getEntry(entryId) !== undefined)
  const bytes = batchBytes(request.entries, knownBytes)
  if (!request.entries.some(isAssistantMessage)) assertUnsavedFits(core.limits, slot, request.entries.length, bytes)
  const before = m.entryCount()
  if (request.parentId === null) m.resetLeaf()
  else if (request.parentId !== undefined) m.branch(request.parentId)
  const texts: Array<string | undefined> = []
  for (const entry of request.entries) {
    m.appendEntry(entry)
    // The text its stored line was just made from, when it was (json-text.ts `rememberJson`).
    texts.push(stringifyJson(m.getLeafEntry()))
  }
  core.touch(slot)
  core.open.grow(slot, bytes)
  const { result, etag } = appendedSince(core, slot, before)
  return { result, etag, texts }
}

/**
 * The JSON text of the answer `{...result, entries}` (`JSON.stringify`'s, key order included),
 * made of the texts of the new entries (`texts`, for `result.entries`) wherever `entries` holds
 * the same objects: each appended entry is written as JSON once, for its line and its answer.
 */
function answerJson (result: AppendResult, entries: SessionEntryBase[], texts: ReadonlyArray<string | undefined>): string {
  let list = ''
  for (let i = 0; i < entries.length; i++) {
    const text = entries[i] === result.entries[i] ? texts[i] : undefined
    list += `${i === 0 ? '' : ','}${text ?? stringifyJson(entries[i]) ?? 'null'}`
  }
  const { leafId, firstSeq, lastSeq, persisted } = result
  return `{"entries":[${list}],"leafId":${JSON.stringify(leafId)},"firstSeq":${firstSeq},"lastSeq":${lastSeq},"persisted":${persisted}}`
}

/** A durable (or deferred) append, with the JSON text of each new entry when known. */
interface Committed extends Appended {
  texts?: ReadonlyArray<string | undefined>
}

/**
 * An append before it is known to be durable: the result without `persisted`, the etag, and the
 * JSON text of each new entry when known.
 */
interface Unsettled {
  result: Omit<AppendResult, 'persisted'>
  etag: string
  texts?: ReadonlyArray<string | undefined>
}

/** What was appended after the first `before` entries, with the etag of the session now. */
function appendedSince (core: RegistryCore, slot: OpenSession, before: number): Unsettled {
  const m = slot.manager
  const entries = m.entriesSlice(before, m.entryCount())
  const result = { entries, leafId: m.getLeafId(), firstSeq: before + 1, lastSeq: before + entries.length }
  return { result, etag: core.etag(slot) }
}

/** Waits until the appended entries are durable (or reports them as deferred). */
async function commitAppend (core: RegistryCore, slot: OpenSession, { result, etag, texts }: Unsettled): Promise<Committed> {
  if (!slot.manager.isFlushed()) {
    await storeUnsaved(core, slot.manager) // queued before any later write of the session's file
    core.announceAppend(slot)
    return { result: settled(result, false), etag, texts }
  }
  try {
    await slot.commit(() => { core.announceAppend(slot) })
  } catch (err) {
    throw databaseOutage(err) ?? new StorageFailed(slot.id, { cause: err })
  }
  return { result: settled(result, true), etag, texts }
}

/** `{...result, persisted}`, spelled out: this runs on every append. */
function settled (result: Omit<AppendResult, 'persisted'>, persisted: boolean): AppendResult {
  return { entries: result.entries, leafId: result.leafId, firstSeq: result.firstSeq, lastSeq: result.lastSeq, persisted }
}

function throwIfLatched (slot: OpenSession): void {
  const latched = slot.manager.getLatchedError()
  if (latched !== undefined) throw new StorageFailed(slot.id, { cause: latched })
}

/** The answer to `PUT leaf`. */
export interface LeafMoved {
  leafId: string | null
  etag: string
  /**
   * True when the move is on disk (an empty branch summary marks it, fsynced) and survives a
   * restart; false when it is held in memory only: a restart or an eviction reloads the session
   * at its last entry in file order (SPEC.md §6.1), as the agents' readers do.
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
  return await core.exclusive(id, ifMatch, (slot) => {
    const m = slot.manager
    if (leafId === null) m.resetLeaf()
    else if (m.getEntry(leafId) === undefined) throw new EntryNotFound(leafId)
    else m.branch(leafId)
    core.bumpRevision(id)
    core.emit(id, { type: 'leaf', leafId: m.getLeafId() })
    return { leafId: m.getLeafId(), etag: core.etag(slot), durable: false }
  })
}

export interface BranchSummaryInput {
  fromId: string | null
  summary: string
  details?: unknown
  fromExtension?: boolean
}

/** `POST branch-summary`: `branchWithSummary`, durable before it answers. */
export async function branchSummary (core: RegistryCore, id: string, input: BranchSummaryInput, ifMatch?: string, blobs?: BlobMode): Promise<Tagged<{ entry: SessionEntryBase, leafId: string | null }>> {
  const { value: { entry, leafId }, etag } = await appendBranchSummary(core, id, input, ifMatch, blobs)
  return { value: { entry, leafId }, etag }
}

/** `branchSummary`, also telling whether the summary is on disk (false: held under deferral). */
async function appendBranchSummary (core: RegistryCore, id: string, input: BranchSummaryInput, ifMatch?: string, blobs?: BlobMode): Promise<Tagged<{ entry: SessionEntryBase, leafId: string | null, persisted: boolean }>> {
  return await core.use(id, async (slot) => {
    const { pending } = await core.locked(slot, ifMatch, () => {
      const m = slot.manager
      throwIfLatched(slot)
      if (input.fromId !== null && m.getEntry(input.fromId) === undefined) throw new EntryNotFound(input.fromId)
      const bytes = batchBytes([input])
      assertUnsavedFits(core.limits, slot, 1, bytes)
      const before = m.entryCount()
      m.branchWithSummary(input.fromId, input.summary, input.details, input.fromExtension)
      core.touch(slot)
      core.open.grow(slot, bytes)
      // Wrapped: the commit is awaited outside the lock, so it can join a group commit.
      return { pending: commitAppend(core, slot, appendedSince(core, slot, before)) }
    })
    const { result, etag } = await pending
    return { value: { entry: applyBlobMode(result.entries[0] as SessionEntryBase, blobs), leafId: result.leafId, persisted: result.persisted }, etag }
  })
}

export async function tree (core: RegistryCore, id: string): Promise<Tagged<TreeView>> {
  return await read(core, id, (slot) => {
    const m = slot.manager
    return { leafId: m.getLeafId(), nodes: m.getFlatTree() }
  })
}

/** Root → `leafId` (default: the current leaf); `[]` for an unknown `leafId` (SPEC.md §6.6 `getBranch`). */
export async function branch (core: RegistryCore, id: string, leafId?: string, blobs?: BlobMode): Promise<Tagged<SessionEntryBase[]>> {
  return await read(core, id, (slot) => applyBlobMode(slot.manager.getBranch(leafId), blobs))
}

/** The context at `leafId` (default: the current leaf; unknown ids fall back, SPEC.md §7.2). */
export async function context (core: RegistryCore, id: string, leafId?: string, blobs?: BlobMode): Promise<Tagged<SessionContext>> {
  return await read(core, id, (slot) => applyBlobMode(slot.manager.buildSessionContext(leafId), blobs))
}

/**
 * Visible entries (see `OpenSession.visibleCount`) after `after`, at most `max`, loading the
 * session if needed; rejects for a deleted one.
 */
export async function readVisible (core: RegistryCore, id: string, after: number, max: number): Promise<SessionEntryBase[]> {
  return readVisibleNow(core, id, after, max) ?? await core.use(id, (slot) => visibleSlice(slot, after, max))
}

/**
 * `readVisible` of a loaded session, read synchronously (a synchronous read cannot race an
 * eviction, and a session with subscribers is never evicted anyway): every live stream calls
 * this once per append. Undefined when the session is not loaded or was deleted.
 */
export function readVisibleNow (core: RegistryCore, id: string, after: number, max: number): SessionEntryBase[] | undefined {
  const loaded = core.indexed ? core.open.peek(id) : undefined
  return loaded !== undefined && !loaded.deleted ? visibleSlice(loaded, after, max) : undefined
}

function visibleSlice (slot: OpenSession, after: number, max: number): SessionEntryBase[] {
  const end = Math.min(slot.visibleCount(), after + max)
  return end > after ? slot.manager.entriesSlice(after, end) : []
}
