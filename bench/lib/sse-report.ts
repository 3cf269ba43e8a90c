/**
 * What the SSE subscriber process (`sse-subscribers.ts`) is told and what it reports, and the
 * latency histograms that let the reports of several subscriber processes be merged.
 */

export interface SubscriberConfig {
  /** Full URL of the stream. */
  url: string
  count: number
  /** Resume point: sent as Last-Event-ID; the first event expected is `after + 1`. */
  after: number
  /** Events every subscriber must receive. */
  expected: number
  mode: 'latency' | 'count'
  timeoutMs: number
}

export interface LatencySummary { n: number, p50: number, p90: number, p99: number, max: number }

/** Latency counts by whole milliseconds (index = ms, the last bucket holds everything above). */
export type LatencyHistogram = number[]

/** Histogram buckets: 0 … 9,999 ms plus one for longer. */
export const HISTOGRAM_BUCKETS = 10_001

/** Percentiles of a histogram (nearest rank, in whole ms). */
export function summarizeHistogram (hist: LatencyHistogram): LatencySummary {
  const n = hist.reduce((a, b) => a + b, 0)
  const rank = (p: number): number => {
    const target = Math.max(1, Math.ceil((p / 100) * n))
    let seen = 0
    for (let ms = 0; ms < hist.length; ms++) {
      seen += hist[ms] as number
      if (seen >= target) return ms
    }
    return Number.NaN
  }
  let max = Number.NaN
  for (let ms = hist.length - 1; ms >= 0; ms--) if ((hist[ms] as number) > 0) { max = ms; break }
  return { n, p50: rank(50), p90: rank(90), p99: rank(99), max }
}

/** Sums histograms of several subscriber processes. */
export function mergeHistograms (parts: LatencyHistogram[]): LatencyHistogram {
  const out = new Array<number>(HISTOGRAM_BUCKETS).fill(0)
  for (const part of parts) part.forEach((count, ms) => { out[ms] = (out[ms] as number) + count })
  return out
}

export interface SubscriberReport {
  subscribers: number
  /** Streams that ended or failed before receiving every event. */
  disconnected: number
  /** Events out of order or duplicated, over all streams. */
  orderErrors: number
  /** Fewest and most events one stream received. */
  minReceived: number
  maxReceived: number
  total: number
  /** Receive time − entry `timestamp`, ms (latency mode). */
  sinceAppend?: LatencyHistogram
  /** Receive time − the appender's send time, ms (latency mode). */
  sinceSend?: LatencyHistogram
  /** `[epoch ms, events received by all streams so far]`, every 100 ms (count mode). */
  timeline?: Array<[number, number]>
  /** The process's own CPU time over the run, s. */
  cpuS: number
}

/** Events received by all streams up to epoch ms `t`, interpolated from a count-mode timeline. */
export function countAt (timeline: ReadonlyArray<[number, number]>, t: number): number {
  let before: [number, number] | undefined
  for (const point of timeline) {
    if (point[0] >= t) {
      if (before === undefined) return point[1]
      return before[1] + (point[1] - before[1]) * (t - before[0]) / Math.max(1, point[0] - before[0])
    }
    before = point
  }
  return before?.[1] ?? 0
}

/** One report for several subscriber processes (histograms summed, counts combined). */
export function mergeReports (reports: SubscriberReport[]): SubscriberReport {
  const sum = (f: (r: SubscriberReport) => number): number => reports.reduce((a, r) => a + f(r), 0)
  const merged: SubscriberReport = {
    subscribers: sum((r) => r.subscribers),
    disconnected: sum((r) => r.disconnected),
    orderErrors: sum((r) => r.orderErrors),
    minReceived: Math.min(...reports.map((r) => r.minReceived)),
    maxReceived: Math.max(...reports.map((r) => r.maxReceived)),
    total: sum((r) => r.total),
    cpuS: sum((r) => r.cpuS),
  }
  const hists = (f: (r: SubscriberReport) => LatencyHistogram | undefined): LatencyHistogram[] =>
    reports.map(f).filter((h): h is LatencyHistogram => h !== undefined)
  if (reports.some((r) => r.sinceAppend !== undefined)) {
    merged.sinceAppend = mergeHistograms(hists((r) => r.sinceAppend))
    merged.sinceSend = mergeHistograms(hists((r) => r.sinceSend))
  }
  return merged
}
