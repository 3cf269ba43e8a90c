/**
 * Runs `fs-append-worker.ts` in its own process, its thread pool sized by `scripts/start.cjs`
 * (loaded first with `--require`, before anything uses the pool), as `npm start` sizes the server's.
 */
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT, spawnScript } from './processes.js'

export interface FsAppendSummary {
  /** Appends (write + fdatasync) completed per second. */
  perS: number
  /** Latency percentiles of one append, ms. */
  p50: number
  p99: number
  /** CPU of the process (all threads) per second, in cores. */
  cores: number
  durationS: number
  /** UV_THREADPOOL_SIZE the process ran with. */
  threadPool: string
}

/** `files` files under the system temp dir (where the servers' data dirs are), one append in flight on each. */
export async function runFsAppends (files: number, bytes: number, durationS: number): Promise<FsAppendSummary> {
  const child = spawnScript('bench/lib/fs-append-worker.ts', [tmpdir(), String(files), String(bytes), String(durationS)], {},
    ['--require', join(ROOT, 'scripts', 'start.cjs')])
  try {
    const { fsAppends } = await child.message<{ fsAppends: FsAppendSummary }>((m) => m.fsAppends !== undefined, (durationS + 60) * 1000)
    return fsAppends
  } finally {
    await child.stop()
  }
}
