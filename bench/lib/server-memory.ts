/**
 * The memory of a server under test, sampled while a benchmark runs: its RSS from /proc every
 * 250 ms, and every second the breakdown the server's own `GET /metrics` reports (V8 heap used
 * and total, external memory such as Buffers, and time spent collecting garbage).
 */
import type { Child } from './processes.js'

/** One `/metrics` reading, in bytes (gcSeconds: total so far). */
export interface HeapReading { rss: number, heapUsed: number, heapTotal: number, external: number, gcSeconds: number }

/** The sum of every sample of `name` (all label sets) in a Prometheus text body; 0 when it has none. */
export function metric (text: string, name: string): number {
  let sum = 0
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1])
  return sum
}

/** One reading of `baseUrl`'s `/metrics` and the RSS of `child` at that moment. */
export async function readHeap (baseUrl: string, child: Child): Promise<HeapReading> {
  const res = await fetch(`${baseUrl}/metrics`)
  const text = await res.text()
  return {
    rss: child.memory().rss,
    heapUsed: metric(text, 'nodejs_heap_size_used_bytes'),
    heapTotal: metric(text, 'nodejs_heap_size_total_bytes'),
    external: metric(text, 'nodejs_external_memory_bytes'),
    gcSeconds: metric(text, 'nodejs_gc_duration_seconds_sum'),
  }
}

export class MemorySampler {
  /** Highest RSS seen. */
  peakRss = 0
  /** The `/metrics` reading with the highest RSS, and the highest of each figure. */
  atPeak: HeapReading | undefined
  readonly max: HeapReading = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, gcSeconds: 0 }
  readonly #timers: NodeJS.Timeout[]

  constructor (baseUrl: string, child: Child) {
    this.#timers = [
      setInterval(() => { this.peakRss = Math.max(this.peakRss, child.memory().rss) }, 250),
      setInterval(() => {
        readHeap(baseUrl, child).then((r) => {
          if (this.atPeak === undefined || r.rss > this.atPeak.rss) this.atPeak = r
          for (const key of Object.keys(r) as Array<keyof HeapReading>) this.max[key] = Math.max(this.max[key], r[key])
        }, () => {})
      }, 1000),
    ]
  }

  stop (): void {
    for (const timer of this.#timers) clearInterval(timer)
  }
}
