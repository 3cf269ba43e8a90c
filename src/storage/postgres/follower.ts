/**
 * A live reader of one session for a stream on this instance: it delivers every entry after
 * `after` (the stream's Last-Event-ID, so a stream resumes on any instance), in `seq` order, each
 * exactly once, re-reading the table whenever the notifier says the session may have grown.
 * Reads run one at a time; a wake during a read makes one more read afterwards, so an entry
 * committed at any moment after the watch began is read. A read that fails (an outage) is
 * retried on the next wake or tail check.
 */
import { notificationLag } from '../../metrics/instruments.js'
import type { PgNotifier } from './notifier.js'
import type { PgSessionLog, StoredEntry } from './session-log.js'

export interface FollowOptions {
  /** Entries read per query (default 1000). */
  pageSize?: number
  onError?: (err: unknown) => void
}

export function follow (log: PgSessionLog, notifier: PgNotifier, tenant: string, session: string, after: number,
  deliver: (entries: StoredEntry[]) => void, options: FollowOptions = {}): () => void {
  const pageSize = options.pageSize ?? 1000
  let delivered = after
  let reading = false
  let again = false
  let stopped = false

  const read = async (): Promise<void> => {
    if (stopped) return
    if (reading) {
      again = true
      return
    }
    reading = true
    try {
      do {
        again = false
        for (;;) {
          const page = await log.read(tenant, session, delivered, pageSize)
          if (stopped || page.length === 0) break
          const first = page[0] as StoredEntry
          notificationLag.observe(Math.max(0, Date.now() - first.committedAt.getTime()) / 1000)
          delivered = (page[page.length - 1] as StoredEntry).seq
          deliver(page)
          if (page.length < pageSize) break
        }
      } while (again && !stopped)
    } catch (err) {
      options.onError?.(err)
    } finally {
      reading = false
    }
  }

  const unwatch = notifier.watch(tenant, session, () => { void read() })
  void read()
  return () => {
    stopped = true
    unwatch()
  }
}
