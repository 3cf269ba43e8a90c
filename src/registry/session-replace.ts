/**
 * `PUT /v1/sessions/{id}/file`: the session becomes what a session file says, as an agent holds
 * it now (after a rename, a migration, a move or any other rewrite of its own file). A session
 * that does not exist is created as `import` creates it; an existing one is replaced whole in one
 * atomic store write (`Journal.replace`), then loaded again, so its entries, tree and context are
 * those of the file and its live streams reload it.
 */
import { hasCode, PreconditionFailed, Validation } from '../errors.js'
import { listingItem } from '../session/listing-item.js'
import { publicHeader } from '../session/public-header.js'
import { SessionSummary } from '../session/session-summary.js'
import type { SessionHeader } from '../session/types.js'
import type { OpenSession } from './open-session.js'
import { preciseNow, type RegistryCore } from './registry-core.js'
import { fileLines, importSession, openStored, parseSessionFile } from './session-import.js'
import { assertClientId } from './session-operations.js'
import type { SessionView } from './types.js'

export interface ReplaceConditions {
  /** Replace only this version (412 otherwise, and when the session does not exist). */
  ifMatch?: string
  /** `*`: create only (412 when the session exists). */
  ifNoneMatch?: string
  /** Told how many bytes a replacement rewrites (not a creation); may refuse by throwing. */
  charge?: (bytes: number) => void
}

/** Tries of a create that lost a race against another create of the same id. */
const TRIES = 3

/** Stores `text` as session `id`: created (`created: true`) or replaced whole. */
export async function replaceFile (core: RegistryCore, id: string, text: string, conditions: ReplaceConditions): Promise<{ session: SessionView, created: boolean }> {
  const header = parseSessionFile(text)[0] as SessionHeader
  if (header.id !== id) throw new Validation(`The file's header id '${header.id}' is not the session '${id}'`)
  assertClientId(id)
  for (let attempt = 1; ; attempt++) {
    try {
      return { session: await replaceExisting(core, id, text, conditions), created: false }
    } catch (err) {
      if (!hasCode(err, 'SS_SESSION_NOT_FOUND')) throw err
    }
    if (conditions.ifMatch !== undefined) throw new PreconditionFailed(conditions.ifMatch)
    try {
      return { session: await importSession(core, text, false), created: true }
    } catch (err) {
      // Created meanwhile by someone else: replace that one (unless only a create was asked for).
      if (!hasCode(err, 'SS_SESSION_EXISTS') || attempt >= TRIES) throw err
    }
  }
}

async function replaceExisting (core: RegistryCore, id: string, text: string, conditions: ReplaceConditions): Promise<SessionView> {
  await core.exclusive(id, conditions.ifMatch, async (session) => {
    if (conditions.ifNoneMatch === '*') throw new PreconditionFailed('*')
    conditions.charge?.(Buffer.byteLength(text, 'utf8'))
    for (;;) {
      const records = parseSessionFile(text)
      const lines = await fileLines(core, text, records)
      const modifiedMs = Math.max(preciseNow(), session.modifiedMs + 0.001)
      const info = listingItem(publicHeader(records[0] as SessionHeader, core.dataDir), SessionSummary.of(records), modifiedMs)
      const outcome = await session.journal.replace(lines, info).catch((err: unknown) => { throw core.writeFailed(session, err) })
      if (outcome.ok) {
        await reopen(core, session, lines, modifiedMs)
        return
      }
      if ('stale' in outcome) await core.catchUp(session, outcome.stale)
      core.assertIfMatch(session, conditions.ifMatch)
    }
  })
  return await core.use(id, (session) => {
    core.announceHeader(session)
    return core.view(session)
  })
}

/**
 * The model of `session` no longer matches its store. A saved session is closed, so the next
 * request loads what was stored; an unsaved one lives in its journal only (SPEC.md §8.3), so it
 * is held anew over the same journal. Its live streams are woken and read the new entries.
 */
async function reopen (core: RegistryCore, session: OpenSession, lines: Parameters<typeof openStored>[2], modifiedMs: number): Promise<void> {
  if (session.saved) {
    core.open.retire(session)
  } else {
    core.open.remove(session)
    core.open.add(await openStored(core, session.id, lines, session.journal, modifiedMs))
  }
  core.emit(session.id, { type: 'append' })
}
