/**
 * Following what other servers change in a store several of them share (PostgreSQL): a change
 * of a session open here is caught up with at once (what was appended is read and added, and
 * its live streams woken; a session replaced or removed goes), and dashboards on this server are
 * told of every change. A store of one process reports nothing.
 */
import type { StoreChange } from '../storage/store.js'
import { infoView, type RegistryCore } from './registry-core.js'

/** Follows the store's changes of `core`'s tenant; returns the stop function. */
export function followStore (core: RegistryCore): () => void {
  return core.store.follow((change) => {
    if (change.tenant !== core.tenant) return
    changed(core, change).catch((err: unknown) => {
      core.log.warn({ err, sessionId: change.id }, 'Following a change of another server failed')
    })
  })
}

async function changed (core: RegistryCore, change: StoreChange): Promise<void> {
  const session = core.open.peek(change.id)
  if (session !== undefined && !session.deleted) {
    // Caught up already (a request read it first); after a cut feed, dashboards hear of it anyway.
    if (change.version <= session.journal.version) return change.resync === true ? tellDashboards(core, change) : undefined
    if (change.kind === 'removed') return core.gone(session)
    await session.lock.run(async () => {
      if (!session.deleted) await core.refresh(session).catch(() => {}) // a session replaced or gone is dropped by it
    })
    if (change.kind === 'appended') return // catchUp told the dashboards
  }
  await tellDashboards(core, change)
}

/** Tells this server's dashboards of a change another server made, with the session's listing item now. */
async function tellDashboards (core: RegistryCore, change: StoreChange): Promise<void> {
  if (!core.dashboardsListen) return core.globalEvents.skip()
  const item = change.kind === 'removed' ? change.item : await core.store.info(core.tenant, change.id)
  // A session removed before this server held it: no view of it here, so a resuming dashboard reloads.
  if (item === undefined) return core.globalEvents.skip()
  const type = change.kind === 'created' ? 'session-created' : change.kind === 'removed' ? 'session-deleted' : 'session-updated'
  core.emitGlobal(type, infoView(item))
}
