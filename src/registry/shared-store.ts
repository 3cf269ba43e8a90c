/**
 * Several servers on one store (STORAGE=postgres): the store is the truth, and a session held
 * open here is only a cache of it. Before a request is answered from an open session, the
 * store is asked whether the session changed since this server read or wrote it (one query);
 * if it did, the session is dropped and loaded again. A write based on a session that changed
 * meanwhile is refused by the store (`ESTALE`) and tried again on the reloaded session, so
 * `If-Match` is checked against what the store holds. Changes other servers make reach this
 * server's index (new, moved and deleted sessions) and its live streams through the storage's
 * `watch`. Storages of one process (disk, memory) have none of this: every check passes.
 */
import { join } from 'node:path'
import { findMovedSessionFile } from '../session/agent-dirs.js'
import { parseJsonlLenient } from '../session/parser.js'
import { isEntry } from '../session/tree.js'
import { isInside } from '../storage/paths.js'
import { isStale } from '../storage/storage-helpers.js'
import type { OpenSession } from './open-session.js'
import type { RegistryCore } from './registry-core.js'
import { readSessionId } from './session-index.js'

/** Tries of one request whose writes met a session another server changed meanwhile. */
export const STALE_RETRIES = 8

export { isStale }

/** False when the store holds a newer state of `slot`'s session than the one open here. */
export async function isCurrent (core: RegistryCore, slot: OpenSession): Promise<boolean> {
  const check = core.storage.isCurrent
  const file = slot.manager.getSessionFile()
  const unsaved = core.storage.unsaved
  if (unsaved !== undefined && file !== undefined && !slot.manager.isFlushed()) return await unsaved.isCurrent(file)
  if (check === undefined || file === undefined || !slot.manager.isFlushed()) return true
  return await check.call(core.storage, file)
}

/**
 * Follows what other servers change in the store; returns the stop function. A session file
 * that appeared or changed is indexed by its header id; an open session that is no longer
 * current is dropped, and its live streams woken (they then read from the session loaded
 * again); one that is gone ends its streams as deleted. This server's dashboards
 * (`GET /v1/events`) are told of each change as of its own (`tellDashboards`).
 */
export function followStore (core: RegistryCore): StoreFollower {
  const watch = core.storage.watch
  const pending = new Set<Promise<void>>()
  const sessions = join(core.dataDir, 'sessions')
  const follow = (path: string, change: (core: RegistryCore, path: string) => Promise<void>): void => {
    if (!path.endsWith('.jsonl') || !isInside(sessions, path)) return
    const done: Promise<void> = change(core, path)
      .catch((err: unknown) => { core.log.warn({ err, path }, 'Following a change of another server failed') })
      .finally(() => { pending.delete(done) })
    pending.add(done)
  }
  const stops = [
    watch?.call(core.storage, (path) => { follow(path, changed) }),
    core.storage.unsaved?.watch((path) => { follow(path, changedUnsaved) }),
  ]
  return {
    stop: () => { for (const stop of stops) stop?.() },
    caughtUp: async () => {
      await core.storage.sync?.()
      await Promise.all([...pending])
    },
    locate: async (id) => {
      if (core.storage.locate === undefined) return undefined
      const found = (await core.storage.locate(id)).find((p) => isInside(sessions, p))
      await Promise.all([...pending])
      return found
    },
  }
}

export interface StoreFollower {
  stop: () => void
  /** Resolves once this server's index has every change committed by other servers so far. */
  caughtUp: () => Promise<void>
  /** The file of session `id` as the store has it now (not indexed yet: made by another server). */
  locate: (id: string) => Promise<string | undefined>
}

async function changed (core: RegistryCore, path: string): Promise<void> {
  await core.ready
  if (await grewOpen(core, path)) return
  if (!core.storage.existsSync(path)) {
    const id = core.index.idForPath(path)
    if (id === undefined) return
    const slot = core.open.peek(id)
    // A move: the storage has the file where it went before it reports it gone from here.
    const moved = findMovedSessionFile(core.storage, core.dataDir, path)
    if (moved !== undefined) {
      core.index.set(id, moved)
      if (slot !== undefined && core.open.retire(slot)) core.emit(id, { type: 'append' })
      await tellDashboards(core, id, 'session-updated')
      return
    }
    core.index.delete(id)
    if (slot !== undefined && !slot.deleted && slot.manager.getSessionFile() === path) {
      const info = core.info(slot)
      core.open.retire(slot)
      slot.deleted = true
      core.emit(id, { type: 'deleted', id })
      core.emitGlobal('session-deleted', info)
    } else core.globalEvents.skip() // no view of it here: a dashboard that resumes reloads its list
    return
  }
  const id = await readSessionId(core.storage, path)
  if (id === undefined) return
  const indexed = core.index.get(id)
  if (indexed !== path) core.index.set(id, path)
  const slot = core.open.peek(id)
  if (slot === undefined) return await tellDashboards(core, id, indexed === undefined ? 'session-created' : 'session-updated')
  if (await isCurrent(core, slot)) return
  if (await appendTail(core, slot)) core.announceAppend(slot)
  else if (core.open.retire(slot)) {
    core.emit(id, { type: 'append' })
    await tellDashboards(core, id, 'session-updated')
  }
}

/**
 * Tells this server's dashboards of a change another server made to session `id`, with its
 * listing view as of now: the session is loaded here for it (its later changes then only read
 * what was appended, `grewOpen`). Nothing is loaded while no dashboard listens or may resume.
 */
async function tellDashboards (core: RegistryCore, id: string, type: 'session-created' | 'session-updated'): Promise<void> {
  if (core.globalListeners.size === 0 && !core.globalEvents.recording) return core.globalEvents.skip()
  await core.use(id, (slot) => { core.emitGlobal(type, core.info(slot)) })
}

/**
 * An unsaved session held here that another server changed, saved or removed: dropped when it
 * is no longer current, and its live streams woken, to read from it loaded again.
 */
async function changedUnsaved (core: RegistryCore, path: string): Promise<void> {
  await core.ready
  for (const slot of [...core.open.values()]) {
    if (slot.manager.getSessionFile() !== path || slot.manager.isFlushed()) continue
    if (!await isCurrent(core, slot) && core.open.retire(slot)) core.emit(slot.id, { type: 'append' })
  }
}

/**
 * The wake-up of live streams: when `path` is the file of a session open here and another server
 * only appended to it, the new entries are added (one read of what follows the entries held) and
 * the session's streams and dashboards told (`announceAppend`), without reading its header
 * again or asking for its version first.
 * False when that is not the case (the caller looks at the change in full).
 */
async function grewOpen (core: RegistryCore, path: string): Promise<boolean> {
  if (!core.storage.existsSync(path)) return false
  const id = core.index.idForPath(path)
  const slot = id === undefined ? undefined : core.open.peek(id)
  if (id === undefined || slot === undefined || slot.manager.getSessionFile() !== path || !await appendTail(core, slot)) return false
  core.announceAppend(slot)
  return true
}

/**
 * Adds to the open session what another server appended to it, read from the store, without
 * reading the session again: only while nothing of this server's is on its way to the store
 * (under the session's lock, every entry durable). False when the session must be loaded anew.
 */
async function appendTail (core: RegistryCore, slot: OpenSession): Promise<boolean> {
  const read = core.storage.readLinesAfter
  const m = slot.manager
  const file = m.getSessionFile()
  if (read === undefined || file === undefined || !m.isFlushed() || m.getLatchedError() !== undefined) return false
  return await slot.lock.run(async () => {
    if (slot.deleted || slot.durable !== m.entryCount()) return false
    const text = await read.call(core.storage, file, m.state.records.length)
    if (text === undefined || slot.deleted || slot.durable !== m.entryCount()) return false
    for (const record of parseJsonlLenient(text)) {
      if (isEntry(record)) m.state.add(record)
      else m.state.records.push(record)
    }
    slot.markRewritten()
    core.touch(slot)
    core.open.grow(slot, Buffer.byteLength(text, 'utf8'))
    return true
  })
}
