/**
 * Unsaved sessions (no assistant message yet, SPEC.md §8.3) on a store several servers share:
 * held in memory like on disk, and also stored whole in the store after every change
 * (`storage.unsaved`), so that any server serves them and none is lost with the process that
 * made it. The store refuses a change based on a state another server changed meanwhile
 * (`ESTALE`), and the request runs again on the session loaded anew, as for a file. Storages
 * of one process have no `unsaved`: there the session lives in memory only, as SPEC.md says.
 */
import { join } from 'node:path'
import { serializeRecord } from '../session/persist-transform.js'
import { restoreUnsaved } from '../session/session-factories.js'
import type { SessionManager } from '../session/session-manager.js'
import { isInside } from '../storage/paths.js'
import type { RegistryCore } from './registry-core.js'

/**
 * Stores the session of `m` when it is still unsaved and the storage keeps such sessions.
 * Call it synchronously after the change: the store is queued at once, so that the first write
 * of the session's file, queued later, comes after it.
 */
export async function storeUnsaved (core: RegistryCore, m: SessionManager): Promise<void> {
  const store = core.storage.unsaved
  const file = m.getSessionFile()
  if (store === undefined || file === undefined || m.isFlushed()) return
  await store.put(file, [m.getHeader(), ...m.getEntries()].map((r) => serializeRecord(r)).join(''))
}

/** The unsaved session `id` of this registry's tenant as the store has it, as a manager; undefined if none. */
export async function loadUnsaved (core: RegistryCore, id: string): Promise<{ manager: SessionManager, bytes: number } | undefined> {
  const store = core.storage.unsaved
  if (store === undefined) return undefined
  const sessions = join(core.dataDir, 'sessions')
  const found = (await store.find(id)).find((s) => isInside(sessions, s.path))
  if (found === undefined) return undefined
  const manager = await restoreUnsaved(found.path, found.text, core.storage, core.managerOptions())
  return manager.getSessionId() === id ? { manager, bytes: Buffer.byteLength(found.text, 'utf8') } : undefined
}

/** Removes the stored copy of a session deleted while still unsaved. */
export async function removeUnsaved (core: RegistryCore, m: SessionManager): Promise<void> {
  const file = m.getSessionFile()
  if (core.storage.unsaved === undefined || file === undefined || m.isFlushed()) return
  await core.storage.unsaved.remove(file)
}
