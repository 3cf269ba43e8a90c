/**
 * `POST /v1/sessions/{id}/records`: entries as an agent wrote them, each with its own `id`,
 * `parentId` and `timestamp` (README "Use it with pi and oh-my-pi"). An id is unique in the
 * session: the same record again is a no-op, another record under a taken id is refused (409),
 * so a client that sends a file's lines again (a retry, a restart) never duplicates one. Every
 * rule of an append holds: `If-Match`, `Idempotency-Key`, the group commit, the deferral rule
 * and its bounds, and SPEC.md §9 on the stored line, which is otherwise the record's JSON text.
 */
import { createHash } from 'node:crypto'
import { EntryIdTaken, IdempotencyKeyReused, UnknownParent, Validation } from '../errors.js'
import { isObject } from '../session/guards.js'
import { storedTextOf } from '../session/persist-transform.js'
import type { FileRecord, SessionEntryBase } from '../session/types.js'
import { holdsImageBlock, prepareAppendBlobs } from './append-blobs.js'
import { submit, type AppendOptions } from './entry-operations.js'
import type { OpenSession } from './open-session.js'
import type { RegistryCore } from './registry-core.js'
import type { Appended } from './types.js'
import { assertUnsavedFits, batchBytes, isAssistantMessage } from './unsaved-bounds.js'

/** An entry as an agent wrote it. */
export type AgentRecord = SessionEntryBase & Record<string, unknown>

/** The answer to `POST records`. */
export interface RecordsResult {
  /** Records that were new and are stored now. */
  appended: number
  /** Records the session held already. */
  existing: number
  /** The last record of the batch, where the leaf is now. */
  leafId: string
  /** The session's entry count after the batch. */
  total: number
  persisted: boolean
}

export interface RecordsAnswer {
  result: RecordsResult
  etag: string
  replayed: boolean
}

/** The records of a body `{records: [...]}`; throws `Validation` (400) for anything else. */
export function parseRecords (body: unknown): AgentRecord[] {
  const records = isObject(body) ? body.records : undefined
  if (!Array.isArray(records) || records.length === 0) throw new Validation('body must be {records: [...]} with at least one record')
  records.forEach((record: unknown, i) => { checkRecord(record, `records/${i}`) })
  return records as AgentRecord[]
}

function checkRecord (record: unknown, at: string): void {
  if (!isObject(record)) throw new Validation(`${at} must be an object`)
  if (typeof record.type !== 'string' || record.type === '' || record.type === 'session') {
    throw new Validation(`${at}/type must be a non-empty string other than 'session'`)
  }
  if (typeof record.id !== 'string' || record.id === '') throw new Validation(`${at}/id must be a non-empty string`)
  if (record.parentId !== null && (typeof record.parentId !== 'string' || record.parentId === '')) {
    throw new Validation(`${at}/parentId must be a non-empty string or null`)
  }
  if (typeof record.timestamp !== 'string') throw new Validation(`${at}/timestamp must be a string`)
  if (record.type === 'message' && !(isObject(record.message) && typeof record.message.role === 'string')) {
    throw new Validation(`${at}/message must be an object with a string role`)
  }
}

/** Appends the records that are new; answers once they are stored (or at once when none is). */
export async function appendRecords (core: RegistryCore, id: string, body: unknown, options: AppendOptions): Promise<RecordsAnswer> {
  const records = parseRecords(body)
  const key = options.idempotencyKey
  const bodyHash = key === undefined ? '' : createHash('sha256').update(JSON.stringify(body)).digest('hex')
  return await core.use(id, async (session): Promise<RecordsAnswer> => {
    const prior = key === undefined ? undefined : session.inFlight.get(key)
    if (prior !== undefined) {
      if (prior.bodyHash !== bodyHash) throw new IdempotencyKeyReused()
      return answerOf(await prior.result, records, true)
    }
    // Without a key, a batch the session holds whole is answered at once; a keyed one goes to the
    // journal, which keeps (and replays) the answers of keys.
    if (key === undefined) {
      const unchanged = await session.lock.run(() => knownAlready(core, session, records, options.ifMatch))
      if (unchanged !== undefined) return unchanged
    }
    if (records.some(holdsImageBlock)) await prepareAppendBlobs(records, core.blobs, core.log)
    const answer = submit(core, session, {
      key: key === undefined ? undefined : { key, bodyHash },
      apply: (s) => { applyRecords(core, s, records, options) },
    })
    if (key === undefined) return answerOf(await answer, records, false)
    const held = { bodyHash, result: answer }
    session.inFlight.set(key, held)
    try {
      const committed = await answer
      return answerOf(committed, records, committed.replayed)
    } finally {
      if (session.inFlight.get(key) === held) session.inFlight.delete(key)
    }
  }, options.ifMatch !== undefined)
}

/**
 * When the session holds every record already (as stored now, under its lock): the leaf moved
 * to the last one and the answer, with nothing written. Else `undefined`.
 */
function knownAlready (core: RegistryCore, session: OpenSession, records: readonly AgentRecord[], ifMatch: string | undefined): RecordsAnswer | undefined {
  core.assertIfMatch(session, ifMatch)
  const m = session.model
  for (const record of records) {
    const held = m.getEntry(record.id)
    if (held === undefined) return undefined
    if (storedTextOf(held as FileRecord) !== storedTextOf(record)) throw new EntryIdTaken(record.id)
  }
  const last = records[records.length - 1]!.id
  if (m.getLeafId() !== last) {
    m.branch(last)
    core.bumpRevision(session)
    core.emit(session.id, { type: 'leaf', leafId: last })
  }
  const result = { appended: 0, existing: records.length, leafId: last, total: m.entryCount(), persisted: session.saved }
  return { result, etag: core.etag(session), replayed: false }
}

/** Checks the batch against the session, then appends its new records; throws before changing anything. */
function applyRecords (core: RegistryCore, session: OpenSession, records: readonly AgentRecord[], options: AppendOptions): void {
  core.assertIfMatch(session, options.ifMatch)
  const m = session.model
  const batch = new Map<string, AgentRecord>()
  const fresh: AgentRecord[] = []
  for (const record of records) {
    const taken = batch.get(record.id) ?? m.getEntry(record.id)
    if (taken !== undefined) {
      if (storedTextOf(taken as FileRecord) !== storedTextOf(record)) throw new EntryIdTaken(record.id)
      continue
    }
    const parent = record.parentId
    if (parent !== null && !batch.has(parent) && m.getEntry(parent) === undefined) throw new UnknownParent(parent)
    batch.set(record.id, record)
    fresh.push(record)
  }
  if (fresh.length > 0 && !fresh.some(isAssistantMessage)) {
    assertUnsavedFits(core.limits, session, fresh.length, batchBytes(fresh, options.bytes))
  }
  for (const record of fresh) m.appendRecord(record)
  m.branch(records[records.length - 1]!.id)
}

function answerOf (committed: Appended, records: readonly AgentRecord[], replayed: boolean): RecordsAnswer {
  const { result, etag } = committed
  const appended = result.entries.length
  return {
    result: { appended, existing: records.length - appended, leafId: records[records.length - 1]!.id, total: result.lastSeq, persisted: result.persisted },
    etag,
    replayed,
  }
}
