/**
 * The Sessions operations of the registry (API.md "Sessions"): create, continue, read, rename,
 * move, fork, export and delete. Import lives in `session-import.ts`, listings in
 * `session-listing.ts`.
 */
import { dirname } from 'node:path'
import { InvalidSessionId, SessionExists } from '../errors.js'
import { sessionDirsOf } from '../session/agent-dirs.js'
import { resolveContinueTarget, writeBreadcrumb } from '../session/breadcrumbs.js'
import { assertValidCwd } from '../session/cwd.js'
import { serializeRecord } from '../session/persist-transform.js'
import type { CreateOptions } from '../session/session-factories.js'
import { SessionManager } from '../session/session-manager.js'
import type { OpenSession } from './open-session.js'
import type { RegistryCore } from './registry-core.js'
import { readSessionId } from './session-index.js'
import { isStale } from './shared-store.js'
import { removeUnsaved, storeUnsaved } from './shared-unsaved.js'
import type { SessionView, Tagged } from './types.js'

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

/** A new session, deferred in memory (no file) until its first assistant message. */
export async function create (core: RegistryCore, input: CreateInput): Promise<SessionView> {
  await core.ready
  core.assertUnsavedRoom()
  const options: CreateOptions = { ...core.managerOptions() }
  if (input.title !== undefined) options.title = input.title
  if (input.parentSession !== undefined) options.parentSession = input.parentSession
  if (input.id === undefined) {
    const m = await SessionManager.create(input.cwd, undefined, core.storage, options)
    await storeUnsaved(core, m)
    return core.view(core.adopt(m))
  }
  assertClientId(input.id)
  if (!core.index.reserve(input.id)) throw new SessionExists(input.id)
  try {
    const m = await SessionManager.create(input.cwd, undefined, core.storage, { ...options, sessionId: input.id })
    if (core.storage.existsSync(m.getSessionFile() as string)) throw new SessionExists(input.id)
    // Another server may hold it unsaved: the store refuses a second session of that id.
    await storeUnsaved(core, m).catch((err: unknown) => { throw isStale(err) ? new SessionExists(input.id as string) : err })
    return core.view(core.adopt(m))
  } finally {
    core.index.release(input.id)
  }
}

/** `continueRecent` (SPEC.md §11.3) through the registry, so a file never gets a second manager. */
export async function continueRecent (core: RegistryCore, cwd: string, terminalId?: string): Promise<{ session: SessionView, created: boolean }> {
  await core.ready
  assertValidCwd(cwd)
  await core.store.caughtUp()
  const sessionDirs = sessionDirsOf(core.dataDir, cwd)
  const path = await resolveContinueTarget(core.storage, { dataDir: core.dataDir, cwd, terminalId, sessionDirs })
  const id = path === null ? undefined : core.index.idForPath(path) ?? await indexFile(core, path)
  if (path !== null && id !== undefined) {
    const session = await core.use(id, (slot) => core.view(slot))
    if (terminalId !== undefined) await writeBreadcrumb(core.storage, core.dataDir, terminalId, cwd, path, core.log)
    return { session, created: false }
  }
  core.assertUnsavedRoom()
  const m = await SessionManager.create(cwd, undefined, core.storage, core.managerOptions(terminalId))
  await storeUnsaved(core, m)
  return { session: core.view(core.adopt(m)), created: true }
}

/** Adds a session file found outside the index (written by someone else since start-up). */
async function indexFile (core: RegistryCore, path: string): Promise<string | undefined> {
  const id = await readSessionId(core.storage, path)
  if (id === undefined || core.index.has(id)) return undefined
  core.index.set(id, path)
  return id
}

export async function getSession (core: RegistryCore, id: string): Promise<SessionView> {
  return await core.use(id, (slot) => core.view(slot))
}

/**
 * `setSessionName`: rewrites a flushed file atomically; a deferred one carries it to its first
 * flush. The same title again changes nothing and writes nothing. `charge` is told about how many
 * bytes the rewrite is about to replace, and may refuse by throwing.
 */
export async function rename (core: RegistryCore, id: string, title: string, ifMatch?: string, charge?: (bytes: number) => void): Promise<SessionView> {
  return await core.exclusive(id, ifMatch, async (slot) => {
    const { manager } = slot
    if (manager.state.header.title === title && manager.sessionName === title) return core.view(slot)
    // The slot's own byte count (file at load plus appends): no stat on the request path, and
    // nothing to fail if the file is already gone (the rewrite then answers for itself).
    if (charge !== undefined && manager.flushed) charge(slot.bytes)
    await slot.manager.setSessionName(title)
    await storeUnsaved(core, slot.manager)
    slot.markRewritten()
    core.announceHeader(slot)
    return core.view(slot)
  })
}

/** `moveTo`: same file name under the new cwd's directory; the index follows the file. */
export async function move (core: RegistryCore, id: string, cwd: string, ifMatch?: string): Promise<SessionView> {
  return await core.exclusive(id, ifMatch, async (slot) => {
    const m = slot.manager
    if (cwd === m.getCwd()) return core.view(slot)
    try {
      await m.moveTo(cwd)
    } finally {
      const file = m.getSessionFile()
      if (file !== undefined) core.index.set(id, file)
    }
    slot.markRewritten()
    core.announceHeader(slot)
    return core.view(slot)
  })
}

/**
 * `fork` (every entry, the leaf kept) or, with `leafId`, `createBranchedSession`, as a second
 * session: the source stays open and unchanged (a deferred one stays deferred).
 */
export async function fork (core: RegistryCore, id: string, leafId?: string, ifMatch?: string): Promise<SessionView> {
  const copy = await core.exclusive(id, ifMatch, async (slot) => {
    // A copy of an unsaved session is itself unsaved (held in memory only).
    if (!slot.manager.isFlushed()) core.assertUnsavedRoom()
    return await SessionManager.forkCopy(slot.manager, leafId)
  })
  return core.view(core.adopt(copy))
}

/**
 * The stored file, after every queued write reached it; a deferred session as it would be
 * written. `locked`: the session's slot when the caller already holds its lock.
 */
export async function exportJsonl (core: RegistryCore, id: string, locked?: OpenSession): Promise<Tagged<string>> {
  const read = async (slot: OpenSession): Promise<Tagged<string>> => {
    const m = slot.manager
    if (!m.isFlushed()) {
      return { value: [m.getHeader(), ...m.getEntries()].map((r) => serializeRecord(r)).join(''), etag: core.etag(slot) }
    }
    await m.flush()
    return { value: await core.storage.readText(m.getSessionFile() as string), etag: core.etag(slot) }
  }
  return locked === undefined ? await core.exclusive(id, undefined, read) : await read(locked)
}

/** A session file to send: its length in bytes and its bytes, read as they are sent. */
export interface ExportStream {
  size: number
  chunks: Iterable<Buffer> | AsyncIterable<Buffer>
  /** Releases the file when the chunks are not read. */
  close: () => Promise<void>
}

/**
 * The stored file as `exportJsonl` has it, for streaming: a saved session is opened (under the
 * session's lock, once every queued write reached it) and read a chunk at a time as the client
 * takes it, up to the length it had then, so an answer never holds the whole file in memory.
 */
export async function exportStream (core: RegistryCore, id: string): Promise<Tagged<ExportStream>> {
  const storage = core.storage
  return await core.exclusive(id, undefined, async (slot) => {
    const m = slot.manager
    const etag = core.etag(slot)
    if (!m.isFlushed() || storage.readTextChunks === undefined) {
      const bytes = Buffer.from((await exportJsonl(core, id, slot)).value)
      return { value: { size: bytes.length, chunks: [bytes], close: async () => {} }, etag }
    }
    await m.flush()
    const file = m.getSessionFile() as string
    const size = storage.statSync(file).size
    const pieces = storage.readTextChunks(file)[Symbol.asyncIterator]()
    const first = await pieces.next() // opens the file now, before a later rewrite could replace it
    const close = async (): Promise<void> => { await pieces.return?.() }
    return { value: { size, chunks: upTo(first, pieces, size), close }, etag }
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

/** Closes the session, removes its file, then tells its subscribers and dashboards. */
export async function remove (core: RegistryCore, id: string, ifMatch?: string): Promise<void> {
  await core.exclusive(id, ifMatch, async (slot) => {
    const m = slot.manager
    const info = core.info(slot)
    await m.close().catch((err: unknown) => { core.log.warn({ err, sessionId: id }, 'Closing a deleted session failed') })
    await removeUnsaved(core, m)
    const file = m.getSessionFile()
    if (file !== undefined && core.storage.existsSync(file)) {
      await core.storage.unlink(file)
      await core.storage.syncDir(dirname(file)).catch(() => {})
    }
    slot.deleted = true
    core.open.remove(slot)
    core.forget(id)
    core.emit(id, { type: 'deleted', id })
    core.listeners.delete(id)
    core.emitGlobal('session-deleted', info)
  })
}
