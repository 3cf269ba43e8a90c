/**
 * Runs one autocannon load in its own process (so the load generator never shares an event loop
 * with a server or with the orchestrator) and prints its summary as one JSON line.
 * Usage: node --import tsx bench/lib/cannon-worker.ts '<CannonConfig JSON>'
 */
import { createRequire } from 'node:module'
import type { CannonConfig, CannonSummary } from './cannon.js'

interface Request { method: string, path: string, headers: Record<string, string>, body: string }
/**
 * `setRequests`, not `setRequest`: autocannon's `setRequest` replaces only the request being
 * built, and from the second request on the connection cycles back to its list, the URL's path.
 */
interface Client { setRequests(requests: Request[]): void }
interface Result {
  requests: { average: number, total: number }
  latency: { p50: number, p99: number, average: number }
  non2xx: number
  errors: number
  timeouts: number
  mismatches: number
  duration: number
  '2xx': number
  statusCodeStats?: Record<string, { count: number }>
}
type Autocannon = (options: Record<string, unknown>) => Promise<Result>

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon
const config = JSON.parse(process.argv[2] ?? '{}') as CannonConfig

let nextClient = 0
const paths = config.paths
const setupClient = paths === undefined
  ? undefined
  : (client: Client): void => {
      const path = paths[nextClient++ % paths.length] as string
      client.setRequests([{ method: config.method, path, headers: config.headers, body: config.body }])
    }
const needle = config.bodyIncludes
const verifyBody = needle === undefined ? undefined : (body: string): boolean => body.includes(needle)

const cpu0 = process.cpuUsage()
const result = await autocannon({
  url: config.url,
  connections: config.connections,
  duration: config.durationS,
  method: config.method,
  headers: config.headers,
  body: config.body,
  timeout: 20,
  ...(setupClient === undefined ? {} : { setupClient }),
  ...(verifyBody === undefined ? {} : { verifyBody }),
})
const cpu = process.cpuUsage(cpu0)
const summary: CannonSummary = {
  clientCores: (cpu.user + cpu.system) / 1e6 / result.duration,
  rps: result.requests.average,
  total: result.requests.total,
  ok: result['2xx'],
  p50: result.latency.p50,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  mismatches: result.mismatches,
  durationS: result.duration,
  statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count])),
}
process.stdout.write(JSON.stringify({ summary }) + '\n')
