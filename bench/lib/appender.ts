/**
 * A paced appender for the fan-out benchmarks: sends `count` POSTs at a fixed rate (open loop:
 * a slow answer never delays the next send, up to `maxInFlight` requests in flight) through an
 * undici Pool. Each body carries `sent=<epoch ms>;` so subscribers can measure end to end.
 */
import { Pool } from 'undici'
import { messageBody } from './http.js'
import { sleep } from './stats.js'

export interface PaceResult {
  sent: number
  /** Answered with `okStatus` (and `"persisted":true` where checked). */
  ok: number
  failed: number
  startMs: number
  endMs: number
  /** Largest delay of a send behind its schedule, ms (appender or server falling behind). */
  maxLagMs: number
}

export interface PaceOptions {
  origin: string
  path: string
  /** Appends per second. */
  rate: number
  count: number
  okStatus: number
  /** When set, every answer body must contain it. */
  bodyIncludes?: string
  maxInFlight?: number
  /** Bytes per body. */
  bytes?: number
}

/** Sends the appends at `rate`/s; resolves once every answer arrived (bounded by the pool's timeouts). */
export async function appendAtRate (options: PaceOptions): Promise<PaceResult> {
  const pool = new Pool(options.origin, { connections: Math.min(64, options.maxInFlight ?? 64), headersTimeout: 30_000, bodyTimeout: 30_000 })
  const result: PaceResult = { sent: 0, ok: 0, failed: 0, startMs: Date.now(), endMs: 0, maxLagMs: 0 }
  const maxInFlight = options.maxInFlight ?? 64
  const interval = 1000 / options.rate
  const inFlight = new Set<Promise<void>>()
  const start = performance.now()
  const send = async (): Promise<void> => {
    try {
      const res = await pool.request({
        method: 'POST',
        path: options.path,
        headers: { 'content-type': 'application/json' },
        body: messageBody(options.bytes ?? 1024, `sent=${Date.now()};`),
      })
      const text = await res.body.text()
      const good = res.statusCode === options.okStatus && (options.bodyIncludes === undefined || text.includes(options.bodyIncludes))
      if (good) result.ok++
      else result.failed++
    } catch {
      result.failed++
    }
  }
  for (let i = 0; i < options.count; i++) {
    const due = start + i * interval
    const wait = due - performance.now()
    if (wait > 1) await sleep(wait)
    result.maxLagMs = Math.max(result.maxLagMs, performance.now() - due)
    // Bounded: with `maxInFlight` answers outstanding, wait for one (the lag shows it).
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight)
    const p = send().finally(() => inFlight.delete(p))
    inFlight.add(p)
    result.sent++
  }
  await Promise.all(inFlight)
  result.endMs = Date.now()
  await pool.close()
  return result
}
