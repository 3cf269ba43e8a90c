/**
 * Idempotency-Keys on a store several servers share (`storage.replays`): the first answer to an
 * append with a key is kept in the store, so a retry that reaches another server is answered
 * with it too, and the same key with another body is refused there as well. Each open session
 * also remembers its keys in memory (open-session.ts), which covers concurrent retries on one
 * server and storages of one process.
 */
import { IdempotencyKeyReused } from '../errors.js'
import type { OpenSession } from './open-session.js'
import type { RegistryCore } from './registry-core.js'
import type { Appended } from './types.js'

/** The first answer kept in the store for `key` on `slot`'s session; `IdempotencyKeyReused` for another body. */
export async function storedReplay (core: RegistryCore, slot: OpenSession, key: string | undefined, bodyHash: string): Promise<Appended | undefined> {
  const file = slot.manager.getSessionFile()
  if (key === undefined || core.storage.replays === undefined || file === undefined) return undefined
  const kept = await core.storage.replays.get(file, slot.id, key)
  if (kept === undefined) return undefined
  if (kept.bodyHash !== bodyHash) throw new IdempotencyKeyReused()
  return kept.response as Appended
}

/**
 * Keeps `answer` in the store for `key`. A failure is logged, not answered: the append itself
 * is done, and only a retry on another server could miss it.
 */
export async function keepReplay (core: RegistryCore, slot: OpenSession, key: string | undefined, bodyHash: string, answer: Appended): Promise<void> {
  const file = slot.manager.getSessionFile()
  if (key === undefined || core.storage.replays === undefined || file === undefined) return
  await core.storage.replays.put(file, slot.id, key, { bodyHash, response: answer }).catch((err: unknown) => {
    core.log.warn({ err, sessionId: slot.id }, 'Keeping the answer to an idempotent append failed')
  })
}
