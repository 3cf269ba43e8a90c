/**
 * The Sessions operations of the registry (API.md "Sessions"): create, continue, read, rename,
 * move, fork, export and delete. Import lives in `session-import.ts`, listings in
 * `session-listing.ts`. Every change is stored first and then made in memory: a refused or
 * failed one changes nothing.
 */
import { InvalidSessionId } from '../errors.js'
import { assertValidCwd } from '../session/cwd.js'
import { deepCopy } from '../session/json-text.js'
import { branchedRecords, forkedRecords } from '../session/fork-records.js'
import { listingItem } from '../session/listing-item.js'
import { createSessionId, nowIso } from '../session/ids.js'
import { serializeRecord, storedForm } from '../session/persist-transform.js'
import { publicHeader } from '../session/public-header.js'
import { SessionModel } from '../session/session-model.js'
import { SessionSummary } from '../session/session-summary.js'
import type { FileRecord, SessionHeader } from '../session/types.js'
import type { WriteOutcome } from '../storage/store.js'
import { EntryNotFound } from '../errors.js'
import { OpenSession } from './open-session.js'
import { preciseNow, type RegistryCore } from './registry-core.js'
import { withInlineImages, type ImagesMode } from './export-images.js'
import { storedLines } from './session-load.js'
import type { ExportStream, SessionView, Tagged } from './types.js'

export type { ExportStream }

/** Ids a client may choose (API.md "Conventions"), minus the route words. */
const CLIENT_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/
const ROUTE_WORDS = new Set(['recent', 'continue', 'import'])

/** Throws `InvalidSessionId` (400) unless `id` is a session id a client may choose. */
export function assertClientId (id: string): void {
  if (!CLIENT_ID_RE.test(id)) throw new InvalidSessionId(`Session id must match ${CLIENT_ID_RE.source}`)
  if (ROUTE_WORDS.has(id)) throw new InvalidSessionId(`Session id '${id}' is a route word`)
}

export interface CreateInput {
  cwd: string
  title?: string
  parentSession?: string
  id?: string
}

/**
 * Stores `records` as a new session of the tenant and holds it open: unsaved (under the deferral
 * rule) or saved at once. `leafId` keeps a leaf other than the last entry.
 */
export async function storeNew (core: RegistryCore, records: FileRecord[], saved: boolean, leafId?: string | null): Promise<OpenSession> {
  const header = records[0] as SessionHeader
  const modifiedMs = preciseNow()
  const info = listingItem(publicHeader(header, core.dataDir), SessionSummary.of(records), modifiedMs)
  const lines = await storedLines(records, core.blobs)
  const journal = await core.store.create(core.tenant, { id: header.id, lines, saved, info })
  const model = new SessionModel(records)
  if (leafId !== undefined) leafId === null ? model.resetLeaf() : model.branch(leafId)
  const bytes = lines.reduce((n, l) => n + l.line.length + 1, 0)
  return core.adopt(new OpenSession(header.id, model, journal, modifiedMs, bytes))
}

/** A new session, deferred (no file on disk) until its first assistant message. */
export async function create (core: RegistryCore, input: CreateInput, terminalId?: string): Promise<SessionView> {
  assertValidCwd(input.cwd)
  if (input.id !== undefined) assertClientId(input.id)
  core.assertUnsavedRoom()
  const id = input.id ?? createSessionId()
  const header: FileRecord = { type: 'session', version: 3, id, timestamp: nowIso(), cwd: input.cwd }
  if (input.parentSession !== undefined) header.parentSession = input.parentSession
  if (input.title !== undefined) header.title = input.title
  const session = await storeNew(core, [header], false)
  if (terminalId !== undefined) await core.store.setBreadcrumb(core.tenant, terminalId, input.cwd, id)
  return core.view(session)
}

/** `continueRecent` (SPEC.md §11.3): the terminal's or the newest saved session of `cwd`, else a new one. */
export async function continueRecent (core: RegistryCore, cwd: string, terminalId?: string): Promise<{ session: SessionView, created: boolean }> {
  assertValidCwd(cwd)
  const id = await core.store.continueTarget(core.tenant, cwd, terminalId)
  if (id !== undefined) {
    try {
      const session = await core.use(id, (s) => core.view(s))
      if (terminalId !== undefined) await core.store.setBreadcrumb(core.tenant, terminalId, cwd, id)
      return { session, created: false }
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SS_SESSION_NOT_FOUND') throw err
    }
  }
  return { session: await create(core, { cwd }, terminalId), created: true }
}

export async function getSession (core: RegistryCore, id: string): Promise<SessionView> {
  return await core.use(id, (session) => core.view(session))
}

/**
 * Stores `header` as the session's new header (`rewriteHeader`: every other line kept byte for
 * byte), then shows it; when the session moved on in the store, it catches up and `If-Match`
 * is checked again.
 */
async function changeHeader (core: RegistryCore, session: OpenSession, header: SessionHeader, ifMatch: string | undefined): Promise<SessionView> {
  for (;;) {
    const line = storedForm(header)?.line ?? serializeRecord(header).slice(0, -1)
    const modifiedMs = Math.max(preciseNow(), session.modifiedMs + 0.001)
    const info = listingItem(publicHeader(header, core.dataDir), session.summary(), modifiedMs)
    const outcome: WriteOutcome = await session.journal.rewriteHeader(line, info).catch((err: unknown) => { throw core.writeFailed(session, err) })
    if (outcome.ok) {
      session.model.setHeader(header)
      session.modifiedMs = modifiedMs
      core.announceHeader(session)
      return core.view(session)
    }
    if ('stale' in outcome) await core.catchUp(session, outcome.stale)
    core.assertIfMatch(session, ifMatch)
    header = { ...session.model.getHeader(), title: header.title, cwd: header.cwd }
  }
}

/**
 * `setSessionName`: the header's title, stored at once (on disk an atomic rewrite of a saved
 * file). The same title again changes nothing and writes nothing. `charge` is told about how many
 * bytes the rewrite replaces, and may refuse by throwing.
 */
export async function rename (core: RegistryCore, id: string, title: string, ifMatch?: string, charge?: (bytes: number) => void): Promise<SessionView> {
  return await core.exclusive(id, ifMatch, async (session) => {
    const header = session.model.getHeader()
    if (header.title === title) return core.view(session)
    if (charge !== undefined && session.saved) charge(session.bytes)
    return await changeHeader(core, session, { ...header, title }, ifMatch)
  })
}

/** `moveTo`: the header's cwd; on disk the file moves to the new cwd's directory. */
export async function move (core: RegistryCore, id: string, cwd: string, ifMatch?: string): Promise<SessionView> {
  assertValidCwd(cwd)
  return await core.exclusive(id, ifMatch, async (session) => {
    const header = session.model.getHeader()
    if (header.cwd === cwd) return core.view(session)
    return await changeHeader(core, session, { ...header, cwd }, ifMatch)
  })
}

/**
 * `fork` (every entry, the leaf kept) or, with `leafId`, `createBranchedSession`, as a second
 * session written at once (SPEC.md §6.3); the source stays as it is, a deferred one deferred.
 * Forking an unsaved session counts against the unsaved-session cap all the same.
 */
export async function fork (core: RegistryCore, id: string, leafId?: string, ifMatch?: string): Promise<SessionView> {
  const copy = await core.exclusive(id, ifMatch, async (session) => {
    const m = session.model
    if (leafId !== undefined && m.getEntry(leafId) === undefined) throw new EntryNotFound(leafId)
    if (!session.saved) core.assertUnsavedRoom()
    const cwd = String(m.getHeader().cwd ?? '')
    const records = leafId === undefined
      ? forkedRecords(deepCopy(m.records()), cwd, m.getHeader().title)
      : branchedRecords(m.index(), m.labels(), leafId, cwd, m.getSessionId())
    const copied = leafId === undefined ? records : deepCopy(records)
    return await storeNew(core, copied, true, leafId === undefined ? m.getLeafId() : undefined)
  })
  return core.view(copy)
}

/** The session's text as the store holds it (an unsaved one as it would be written). */
export async function exportJsonl (core: RegistryCore, id: string): Promise<Tagged<string>> {
  const { value, etag } = await exportStream(core, id)
  const parts: Buffer[] = []
  for await (const chunk of value.chunks) parts.push(chunk)
  return { value: Buffer.concat(parts).toString('utf8'), etag }
}

/**
 * The stored text for streaming: opened under the session's lock (no write in between) and
 * read a piece at a time as the client takes it, up to the length it had then.
 */
export async function exportStream (core: RegistryCore, id: string, images: ImagesMode = 'ref'): Promise<Tagged<ExportStream>> {
  const stored = await storedStream(core, id)
  return images === 'inline' ? { value: await withInlineImages(core, stored.value), etag: stored.etag } : stored
}

async function storedStream (core: RegistryCore, id: string): Promise<Tagged<ExportStream>> {
  return await core.exclusive(id, undefined, async (session) => {
    const etag = core.etag(session)
    const stored = session.saved ? await core.store.read(core.tenant, id) : undefined
    if (stored === undefined) {
      const bytes = Buffer.from(session.model.records().map((r) => serializeRecord(r)).join(''))
      return { value: { size: bytes.length, chunks: [bytes], close: async () => {} }, etag }
    }
    const pieces = stored.text[Symbol.asyncIterator]()
    const first = await pieces.next() // opens it now, before a later rewrite could replace it
    const close = async (): Promise<void> => { await pieces.return?.() }
    return { value: { size: stored.size, chunks: upTo(first, pieces, stored.size), close }, etag }
  })
}

/** The UTF-8 bytes of `first` and the rest of `pieces`, ending after `size` bytes. */
async function * upTo (first: IteratorResult<string>, pieces: AsyncIterator<string>, size: number): AsyncIterable<Buffer> {
  let left = size
  try {
    for (let piece = first; piece.done !== true && left > 0; piece = await pieces.next()) {
      const bytes = Buffer.from(piece.value, 'utf8')
      yield bytes.length > left ? bytes.subarray(0, left) : bytes
      left -= bytes.length
    }
  } finally {
    await pieces.return?.()
  }
}

/** Removes the session from the store, then tells its subscribers and dashboards. */
export async function remove (core: RegistryCore, id: string, ifMatch?: string): Promise<void> {
  await core.exclusive(id, ifMatch, async (session) => {
    for (;;) {
      const outcome = await session.journal.remove().catch((err: unknown) => { throw core.writeFailed(session, err) })
      if (outcome.ok) break
      if ('stale' in outcome) await core.catchUp(session, outcome.stale)
      core.assertIfMatch(session, ifMatch)
    }
    core.gone(session)
  })
}
