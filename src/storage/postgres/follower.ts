/**
 * Live readers of sessions for the streams of this instance. Each follower gets every entry
 * after its `after` (the stream's Last-Event-ID, so a stream resumes on any instance), in `seq`
 * order, each exactly once. The followers of one session share its reads: when the notifier
 * says the session may have grown, one read of the new entries serves them all from a window of
 * recent entries; a follower behind that window (a resume from long ago) catches up with reads
 * of its own and then joins the shared ones. A wake during a read makes one more read
 * afterwards, so an entry committed at any moment after a follower began reaches it. A read
 * that fails (an outage) is retried on the next wake or tail check.
 */
import { notificationLag } from '../../metrics/instruments.js'
import type { PgNotifier } from './notifier.js'
import type { PgSessionLog, StoredEntry } from './session-log.js'

export interface FollowerOptions {
  /** Entries read per query (default 1000). */
  pageSize?: number
  /** Recent entries kept per followed session for followers that are slightly behind (default 2000). */
  windowSize?: number
  onError?: (err: unknown) => void
}

interface Follower {
  delivered: number
  deliver: (entries: StoredEntry[]) => void
  busy: boolean
  stopped: boolean
}

interface Tail {
  tenant: string
  session: string
  /** Recent entries, contiguous and ascending. */
  window: StoredEntry[]
  /** The highest seq read so far. */
  last: number
  reading: boolean
  again: boolean
  followers: Set<Follower>
  unwatch: () => void
}

const keyOf = (tenant: string, session: string): string => `${tenant}\u0000${session}`

export class LiveReader {
  readonly #log: PgSessionLog
  readonly #notifier: PgNotifier
  readonly #pageSize: number
  readonly #windowSize: number
  readonly #onError: (err: unknown) => void
  readonly #tails = new Map<string, Tail>()

  constructor (log: PgSessionLog, notifier: PgNotifier, options: FollowerOptions = {}) {
    this.#log = log
    this.#notifier = notifier
    this.#pageSize = options.pageSize ?? 1000
    this.#windowSize = Math.max(options.windowSize ?? 2000, this.#pageSize)
    this.#onError = options.onError ?? (() => {})
  }

  /** Delivers the session's entries after `after` to `deliver`, now and as they come. Returns the stop function. */
  follow (tenant: string, session: string, after: number, deliver: (entries: StoredEntry[]) => void): () => void {
    const key = keyOf(tenant, session)
    let tail = this.#tails.get(key)
    if (tail === undefined) {
      const created: Tail = { tenant, session, window: [], last: after, reading: false, again: false, followers: new Set(), unwatch: () => {} }
      created.unwatch = this.#notifier.watch(tenant, session, () => { void this.#pump(created) })
      this.#tails.set(key, tail = created)
    }
    const follower: Follower = { delivered: after, deliver, busy: false, stopped: false }
    tail.followers.add(follower)
    const joined = tail
    this.#serve(joined, follower)
    void this.#pump(joined)
    return () => {
      follower.stopped = true
      joined.followers.delete(follower)
      if (joined.followers.size === 0 && this.#tails.get(key) === joined) {
        this.#tails.delete(key)
        joined.unwatch()
      }
    }
  }

  /** Number of sessions followed now (one shared reader each). */
  get sessions (): number { return this.#tails.size }

  /** Reads what is new after `tail.last`, page by page, serving every follower after each page. */
  async #pump (tail: Tail): Promise<void> {
    if (tail.reading) {
      tail.again = true
      return
    }
    tail.reading = true
    try {
      do {
        tail.again = false
        for (;;) {
          const page = await this.#log.read(tail.tenant, tail.session, tail.last, this.#pageSize)
          if (page.length === 0) break
          notificationLag.observe(Math.max(0, Date.now() - (page[0] as StoredEntry).committedAt.getTime()) / 1000)
          if (tail.window.length > 0 && (page[0] as StoredEntry).seq !== tail.last + 1) tail.window = []
          tail.window.push(...page)
          if (tail.window.length > this.#windowSize) tail.window = tail.window.slice(-this.#windowSize)
          tail.last = (page[page.length - 1] as StoredEntry).seq
          for (const f of tail.followers) this.#serve(tail, f)
          if (page.length < this.#pageSize) break
        }
      } while (tail.again && tail.followers.size > 0)
    } catch (err) {
      this.#onError(err)
    } finally {
      tail.reading = false
    }
  }

  /** Hands `f` what the window holds beyond it, or starts its own catch-up when it is behind the window. */
  #serve (tail: Tail, f: Follower): void {
    if (f.busy || f.stopped || f.delivered >= tail.last) return
    const first = tail.window[0]
    if (first !== undefined && first.seq <= f.delivered + 1) {
      const page = tail.window.slice(f.delivered + 1 - first.seq)
      f.delivered = tail.last
      f.deliver(page)
      return
    }
    void this.#catchUp(tail, f)
  }

  /** Reads for `f` alone until the shared window reaches it. */
  async #catchUp (tail: Tail, f: Follower): Promise<void> {
    f.busy = true
    try {
      while (!f.stopped && f.delivered < tail.last) {
        const first = tail.window[0]
        if (first !== undefined && first.seq <= f.delivered + 1) break
        const page = await this.#log.read(tail.tenant, tail.session, f.delivered, this.#pageSize)
        if (page.length === 0 || f.stopped) break
        f.delivered = (page[page.length - 1] as StoredEntry).seq
        f.deliver(page)
      }
    } catch (err) {
      this.#onError(err)
    } finally {
      f.busy = false
    }
    this.#serve(tail, f)
  }
}

/** One follower on a reader of its own: `new LiveReader(…).follow(…)`. */
export function follow (log: PgSessionLog, notifier: PgNotifier, tenant: string, session: string, after: number,
  deliver: (entries: StoredEntry[]) => void, options: FollowerOptions = {}): () => void {
  return new LiveReader(log, notifier, options).follow(tenant, session, after, deliver)
}
