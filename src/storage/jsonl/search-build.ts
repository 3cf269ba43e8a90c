/**
 * The build of the search index a JSONL store starts with when the index is not known to hold
 * every file (missing, damaged, of another version, or kept with `SEARCH_INDEX=0` meanwhile).
 * It runs in the background while the server serves; `reindex` joins it rather than starting a
 * second one.
 */
import type { Logger } from '../../session/logger.js'
import type { ReindexProgress } from '../store.js'

export class StartupSearchBuild {
  /** Resolves once the build is over (at once when none was needed). */
  readonly done: Promise<void>
  #running: boolean
  #progress: ReindexProgress = () => {}

  constructor (needed: boolean, run: (progress: ReindexProgress) => Promise<void>, log: Logger) {
    this.#running = needed
    this.done = !needed
      ? Promise.resolve()
      : run((done, total) => { this.#progress(done, total) })
        .catch((err: unknown) => { log.error({ err }, 'Building the search index failed') })
        .finally(() => { this.#running = false })
  }

  /** Waits for the build running since start, its progress told to `progress`; false when none runs. */
  async join (progress: ReindexProgress): Promise<boolean> {
    if (!this.#running) return false
    this.#progress = progress
    await this.done
    return true
  }
}
