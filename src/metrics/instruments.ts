/**
 * The process's Prometheus instruments (API.md `GET /metrics`), in one registry per process:
 * a process serves one app, and the storage layers below the app (group commit, the database
 * pool) record into the same registry without knowing about HTTP. Gauges that describe live
 * state (open streams, open sessions, pool use) are read when scraped, from the sources that
 * registered themselves through `addGaugeSource`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export const metricsRegistry = new Registry()
collectDefaultMetrics({ register: metricsRegistry })

/**
 * Requests answered, by route pattern, method and status: counted here on every answer (a few map
 * lookups, where the counter's own `inc` would build and hash a label set each time) and handed
 * to `ss_http_requests_total` when it is scraped.
 */
const answered = new Map<string, Map<string, Map<number, number>>>()

/** Counts one answered request. */
export function countRequest (method: string, route: string, status: number): void {
  let byMethod = answered.get(route)
  if (byMethod === undefined) answered.set(route, byMethod = new Map())
  let byStatus = byMethod.get(method)
  if (byStatus === undefined) byMethod.set(method, byStatus = new Map())
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
}

// Registered on construction: the registry keeps it.
void new Counter({
  name: 'ss_http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [metricsRegistry],
  collect () {
    this.reset()
    for (const [route, byMethod] of answered) {
      for (const [method, byStatus] of byMethod) {
        for (const [status, count] of byStatus) this.inc({ method, route, status: String(status) }, count)
      }
    }
  },
})

export const appendDuration = new Histogram({
  name: 'ss_append_duration_seconds',
  help: 'Time from receiving an append request to its answer (durable when persisted)',
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
})

export const commitBatch = new Histogram({
  name: 'ss_commit_batch_entries',
  help: 'Lines written by one group commit: one write then sync of a session file (storage="file"), or one database transaction (storage="postgres")',
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
  labelNames: ['storage'] as const,
  registers: [metricsRegistry],
})

export const notificationLag = new Histogram({
  name: 'ss_notification_lag_seconds',
  help: 'Time from a commit on any instance to this instance reading the new entries for its streams',
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
  registers: [metricsRegistry],
})

export const storageInfo = new Gauge({
  name: 'ss_storage_info',
  help: 'The storage backend this instance serves from (1 for the one in use)',
  labelNames: ['kind'] as const,
  registers: [metricsRegistry],
})

export const blobCollections = new Counter({
  name: 'ss_blob_gc_runs_total',
  help: 'Collections of a tenant\'s unreferenced blobs this instance ran, by outcome (done, dry_run, failed)',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
})

export const blobsCollected = new Counter({
  name: 'ss_blob_gc_deleted_blobs_total',
  help: 'Unreferenced blobs removed by collections on this instance',
  registers: [metricsRegistry],
})

export const blobBytesCollected = new Counter({
  name: 'ss_blob_gc_freed_bytes_total',
  help: 'Bytes of the unreferenced blobs removed by collections on this instance',
  registers: [metricsRegistry],
})

export const retentionDeleted = new Counter({
  name: 'ss_retention_deleted_sessions_total',
  help: 'Sessions deleted by retention on this instance (unchanged for longer than their tenant keeps them)',
  registers: [metricsRegistry],
})

/** Something whose value a gauge reads at scrape time; several sources add up. */
export type GaugeSource = () => number

const sources = new Map<string, Set<GaugeSource>>()

function sum (name: string, max = false): number {
  let total = 0
  for (const source of sources.get(name) ?? []) {
    try {
      total = max ? Math.max(total, source()) : total + source()
    } catch {
      // A source that cannot answer (closing) counts as nothing rather than failing the scrape.
    }
  }
  return total
}

/** A gauge read from its sources at scrape time: their sum, or with `max` the largest. */
function liveGauge (name: string, help: string, max = false): void {
  // Registered on construction: the registry keeps it.
  void new Gauge({ name, help, registers: [metricsRegistry], collect () { this.set(sum(name, max)) } })
}

liveGauge('ss_open_streams', 'Live SSE streams open on this instance')
liveGauge('ss_open_sessions', 'Sessions held loaded in memory on this instance')
liveGauge('ss_db_pool_total', 'Database connections open in the pool (postgres storage)')
liveGauge('ss_db_pool_idle', 'Database connections idle in the pool (postgres storage)')
liveGauge('ss_db_pool_waiting', 'Queries waiting for a database connection (postgres storage)')
liveGauge('ss_search_lag_seconds', 'Age of the oldest stored change the search index does not hold yet (0 when it holds every one)', true)
liveGauge('ss_search_pending', 'Stored lines and changes waiting to enter the search index')
liveGauge('ss_search_building', 'Whether the search index is being built whole from the stored session files (1) or not (0)', true)

export type LiveGaugeName = 'ss_open_streams' | 'ss_open_sessions' | 'ss_db_pool_total' | 'ss_db_pool_idle' | 'ss_db_pool_waiting' |
  'ss_search_lag_seconds' | 'ss_search_pending' | 'ss_search_building'

/** Adds `source` to the gauge `name`; returns the function that removes it. */
export function addGaugeSource (name: LiveGaugeName, source: GaugeSource): () => void {
  let set = sources.get(name)
  if (set === undefined) sources.set(name, set = new Set())
  set.add(source)
  const added = set
  return () => { added.delete(source) }
}

/** The exposition: every metric in the Prometheus text format. */
export async function renderMetrics (): Promise<{ contentType: string, body: string }> {
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() }
}
