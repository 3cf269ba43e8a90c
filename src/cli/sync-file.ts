/**
 * One step of `sync` for one agent file: bring the server's session to what the file says now.
 * - Lines appended after what the server holds (the same inode, the fingerprints of the stored
 *   part unchanged) go as records with their ids (`POST records`): a resend is a no-op.
 * - A file not seen before is compared with the server's copy: nothing to do, a tail to append,
 *   or the whole file to store.
 * - A file the agent rewrote (title, migration, move) is stored whole (`PUT file`), under
 *   `If-Match` of the version just read (412: read again and retry).
 * Only whole lines are sent: a line the agent is still writing waits for the next step. The blobs
 * the lines refer to are uploaded from the agent's blob directory first.
 */
import { stat } from 'node:fs/promises'
import { isStoreError, type AgentRecord, type SessionStoreClient } from '../client/index.js'
import { headerOf, readRange, sha256 } from './agent-files.js'
import type { BlobSender } from './agent-blobs.js'
import { WINDOW, type FileState } from './sync-state.js'

/** What a step did. */
export type Outcome = 'unchanged' | 'appended' | 'imported' | 'replaced' | 'not-a-session'

export interface StepResult {
  outcome: Outcome
  /** The file's state after the step (`undefined` for a file that is no session). */
  state?: FileState
  /** Entries the step appended. */
  appended: number
}

/** Most records in one request. */
const BATCH_RECORDS = 500
/** About the most bytes of records in one request. */
const BATCH_BYTES = 8 * 1024 * 1024
/** Tries of a whole-file store that lost a race (412) against another writer. */
const REPLACE_TRIES = 5

export class FileSync {
  readonly #client: SessionStoreClient
  readonly #blobs: BlobSender

  constructor (client: SessionStoreClient, blobs: BlobSender) {
    this.#client = client
    this.#blobs = blobs
  }

  /** Brings the session of `path` up to the file; `known` is what the server held after the last step. */
  async step (path: string, known: FileState | undefined): Promise<StepResult> {
    const st = await stat(path)
    if (known !== undefined && st.ino === known.ino && st.size === known.size && st.mtimeMs === known.mtimeMs) {
      return { outcome: 'unchanged', state: known, appended: 0 }
    }
    // Read once: every decision and the fingerprints come from these bytes.
    const file = await readRange(path, 0, st.size)
    const seen = { ino: st.ino, size: file.length, mtimeMs: st.mtimeMs }
    if (known !== undefined && st.ino === known.ino && file.length >= known.offset && holds(file, known)) {
      const tail = wholeLines(file.subarray(known.offset))
      if (tail.length === 0) return { outcome: 'unchanged', state: { ...known, ...seen }, appended: 0 }
      const records = recordsOf(tail)
      if (records !== undefined) {
        const appended = await this.#append(known.id, tail, records)
        if (appended !== undefined) return { outcome: 'appended', state: fingerprint(file, known.id, known.offset + tail.length, seen), appended }
      }
    }
    return await this.#whole(file, seen)
  }

  /** Sends `records`; the number appended, or `undefined` when the session refuses them (they must go whole). */
  async #append (id: string, text: Buffer, records: AgentRecord[]): Promise<number | undefined> {
    await this.#blobs.send(text.toString('utf8'))
    let appended = 0
    for (const batch of batches(records)) {
      try {
        appended += (await this.#client.appendRecords(id, batch)).appended
      } catch (err) {
        // Another record under a taken id, an unknown parent, or no such session: store the file whole.
        if (isStoreError(err, 409) || isStoreError(err, 422) || isStoreError(err, 404)) return undefined
        throw err
      }
    }
    return appended
  }

  /** The whole file (its whole lines) against the server's copy. */
  async #whole (file: Buffer, seen: Seen): Promise<StepResult> {
    const bytes = wholeLines(file)
    const text = bytes.toString('utf8')
    const header = headerOf(text)
    if (header === undefined) return { outcome: 'not-a-session', appended: 0 }
    await this.#blobs.send(text)
    const id = header.id
    const done = (outcome: Outcome, appended = 0): StepResult => ({ outcome, state: fingerprint(file, id, bytes.length, seen), appended })
    for (let attempt = 1; ; attempt++) {
      const stored = await this.#stored(id)
      if (stored !== undefined && bytes.equals(stored.bytes)) return done('unchanged')
      const tail = stored !== undefined && stored.bytes.length < bytes.length && bytes.subarray(0, stored.bytes.length).equals(stored.bytes)
        ? bytes.subarray(stored.bytes.length)
        : undefined
      const records = tail === undefined ? undefined : recordsOf(tail)
      if (tail !== undefined && records !== undefined) {
        const appended = await this.#append(id, tail, records)
        if (appended !== undefined) return done('appended', appended)
      }
      try {
        const options = stored === undefined ? { ifNoneMatch: '*' as const } : { ifMatch: stored.etag }
        const { created } = await this.#client.replaceSessionFile(id, text, options)
        return done(created ? 'imported' : 'replaced')
      } catch (err) {
        // Changed (or created) on the server since it was read: read it again.
        if (!isStoreError(err, 412) || attempt >= REPLACE_TRIES) throw err
      }
    }
  }

  /** The server's copy of session `id` (stored bytes and etag), or `undefined` when it has none. */
  async #stored (id: string): Promise<{ bytes: Buffer, etag: string } | undefined> {
    try {
      const session = await this.#client.getSession(id)
      const text = await this.#client.exportSession(id)
      return { bytes: Buffer.from(text, 'utf8'), etag: session.etag }
    } catch (err) {
      if (isStoreError(err, 404)) return undefined
      throw err
    }
  }
}

/** `bytes` up to and with its last `"\n"` (a line still being written is left for later). */
function wholeLines (bytes: Buffer): Buffer {
  const end = bytes.lastIndexOf(0x0a)
  return bytes.subarray(0, end + 1)
}

/** The entries of whole lines, or `undefined` when a line is no entry (the file must then go whole). */
function recordsOf (text: Buffer): AgentRecord[] | undefined {
  const records: AgentRecord[] = []
  for (const line of text.toString('utf8').split('\n')) {
    if (line.trim() === '') continue
    let record: unknown
    try { record = JSON.parse(line) } catch { return undefined }
    const r = record as Partial<AgentRecord> | null
    if (typeof r !== 'object' || r === null || typeof r.id !== 'string' || typeof r.type !== 'string' || r.type === 'session') return undefined
    records.push(r as AgentRecord)
  }
  return records
}

function * batches (records: AgentRecord[]): Generator<AgentRecord[]> {
  let batch: AgentRecord[] = []
  let bytes = 0
  for (const record of records) {
    const size = JSON.stringify(record).length
    if (batch.length > 0 && (batch.length >= BATCH_RECORDS || bytes + size > BATCH_BYTES)) {
      yield batch
      batch = []
      bytes = 0
    }
    batch.push(record)
    bytes += size
  }
  if (batch.length > 0) yield batch
}

/** The file as `step` read it. */
interface Seen { ino: number, size: number, mtimeMs: number }

/** The first `known.offset` bytes of `file` have the fingerprints of what the server holds. */
function holds (file: Buffer, known: FileState): boolean {
  return sha256(file.subarray(0, Math.min(WINDOW, known.offset))) === known.head &&
    sha256(file.subarray(Math.max(0, known.offset - WINDOW), known.offset)) === known.tail
}

/** The state of `file` (as read, `seen`) whose first `offset` bytes the server holds. */
function fingerprint (file: Buffer, id: string, offset: number, seen: Seen): FileState {
  const head = sha256(file.subarray(0, Math.min(WINDOW, offset)))
  const tail = sha256(file.subarray(Math.max(0, offset - WINDOW), offset))
  return { id, offset, head, tail, ...seen }
}
