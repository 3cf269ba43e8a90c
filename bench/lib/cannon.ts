/**
 * autocannon in a separate process (`cannon-worker.ts`): one call, one load, one summary.
 */
import { spawnScript } from './processes.js'

export interface CannonConfig {
  /** Base URL plus path of the default request. */
  url: string
  connections: number
  durationS: number
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body: string
  /** One path per connection (connection i uses `paths[i % length]`); default: the URL's path. */
  paths?: string[]
  /** Every response body must contain this string; others count as mismatches. */
  bodyIncludes?: string
}

export interface CannonSummary {
  /** Mean requests per second over the run (autocannon's `requests.average`). */
  rps: number
  total: number
  /** Responses with a 2xx status. */
  ok: number
  /** Latency percentiles, ms. */
  p50: number
  p99: number
  non2xx: number
  errors: number
  timeouts: number
  /** Responses whose body failed `bodyIncludes`. */
  mismatches: number
  durationS: number
  /** Responses by status code. */
  statuses: Record<string, number>
  /** CPU the load generator (this worker process) used per second of load, in cores. */
  clientCores: number
}

/** Runs the load and resolves its summary; the child is bounded by `durationS` plus a margin. */
export async function runCannon (config: CannonConfig): Promise<CannonSummary> {
  const child = spawnScript('bench/lib/cannon-worker.ts', [JSON.stringify(config)])
  try {
    const { summary } = await child.message<{ summary: CannonSummary }>((m) => m.summary !== undefined, (config.durationS + 60) * 1000)
    return summary
  } finally {
    await child.stop()
  }
}

/** Throws unless every request of the load was answered 2xx, without errors or timeouts, with the body asked for. */
export function checkClean (name: string, s: CannonSummary): void {
  if (s.non2xx !== 0 || s.errors !== 0 || s.timeouts !== 0 || s.mismatches !== 0) {
    throw new Error(`${name}: ${s.non2xx} non-2xx, ${s.errors} errors, ${s.timeouts} timeouts, ${s.mismatches} bodies without persisted:true; statuses ${JSON.stringify(s.statuses)}`)
  }
}
