/**
 * The search side of the JSONL store: its index (search-index.ts) and how that index is built
 * whole, at start when it is not known to hold every file (missing, damaged, of another version,
 * or kept with `SEARCH_INDEX=0` meanwhile) and on `reindex`. The build at start runs in the
 * background while the server serves; a `reindex` joins the build under way rather than starting
 * a second one. The gauge `ss_search_building` is 1 while a build runs.
 */
import type Database from 'better-sqlite3'
import { SearchIndexOff } from '../../errors.js'
import { addGaugeSource } from '../../metrics/instruments.js'
import type { Logger } from '../../session/logger.js'
import type { ReindexProgress, SearchPage, SearchQuery } from '../store.js'
import { SearchIndex } from './search-index.js'

export interface SearchBuildHooks {
  /** Resolves true once the listing was checked against every file. */
  checked(): Promise<boolean>
  /** The listing index was new: that check read every file into the search index too. */
  fresh: boolean
  /** Reads every saved session into the (emptied) index; false when stopped by `close`. */
  rebuild(progress: ReindexProgress): Promise<boolean>
}

export class JsonlSearch {
  readonly index: SearchIndex
  readonly #enabled: boolean
  readonly #log: Logger
  /** The index must be built whole at start (it was emptied, before any change was queued). */
  readonly #needed: boolean
  #hooks: SearchBuildHooks | undefined
  #running = false
  /** Whom the build under way tells its progress: every `reindex` waiting for it. */
  readonly #listeners = new Set<ReindexProgress>()
  /** Resolves once the build under way (at start, or by `reindex`) is over; at once when there is none. */
  done: Promise<void> = Promise.resolve()
  /** Removes this build's source of the gauge `ss_search_building`. */
  readonly #ungauge: () => void

  /** Over the listing's connection `db`, the index in `file` (`:memory:` for one in memory). */
  constructor (db: Database.Database, file: string, log: Logger, enabled: boolean) {
    this.index = new SearchIndex(db, file, log, enabled)
    this.#enabled = enabled
    this.#needed = enabled && !this.index.complete()
    if (this.#needed) this.index.clear()
    this.#log = log
    this.#ungauge = addGaugeSource('ss_search_building', () => this.#running ? 1 : 0)
  }

  /** Closes the index (after the build at start stopped: `done`). */
  async close (): Promise<void> {
    this.#ungauge()
    await this.index.close()
  }

  /** Starts the build at start, when one is needed. */
  start (hooks: SearchBuildHooks): void {
    this.#hooks = hooks
    if (!this.#needed) return
    this.#running = true
    this.done = (async () => {
      if (await hooks.checked() && (hooks.fresh || await hooks.rebuild(this.#tell))) this.index.markComplete()
      // Over once the index holds it all, not once it is queued: a `reindex` meanwhile joins the build.
      await this.index.flushed()
    })().catch((err: unknown) => { this.#log.error({ err }, 'Building the search index failed') })
      .finally(() => { this.#running = false })
  }

  /** One page of hits; `SearchIndexOff` (503) with `SEARCH_INDEX=0`. */
  async search (tenant: string, query: SearchQuery): Promise<SearchPage> {
    if (!this.#enabled) throw new SearchIndexOff()
    return await this.index.search(tenant, query)
  }

  /** Builds the index anew (or waits for the build under way), `progress` told as it goes. */
  async reindex (progress: ReindexProgress): Promise<void> {
    const hooks = this.#hooks
    if (hooks === undefined || !await hooks.checked()) return
    this.#listeners.add(progress)
    try {
      if (this.#running) {
        await this.done
        return
      }
      this.#running = true
      const build = (async () => {
        this.index.markStale()
        this.index.clear()
        if (await hooks.rebuild(this.#tell)) this.index.markComplete()
      })().finally(() => { this.#running = false })
      // A `reindex` meanwhile joins this one; a failure is this caller's to report.
      this.done = build.catch(() => {})
      await build
    } finally {
      this.#listeners.delete(progress)
    }
  }

  /** The build's progress, told to every `reindex` waiting for it. */
  readonly #tell: ReindexProgress = (done, total) => {
    for (const listener of this.#listeners) listener(done, total)
  }
}
