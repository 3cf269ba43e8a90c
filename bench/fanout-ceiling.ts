/**
 * SSE fan-out ceiling (target 3, last part): the most deliveries per second (events ×
 * subscribers) session-store sustains, against a minimal `node:http` broadcaster that writes one
 * pre-serialized frame to every socket (`lib/broadcaster.ts`), measured in the same run. Both get
 * the same 100 subscribers (one process, counting frames) and the same paced appender offering
 * more events than either delivers; deliveries are counted at the subscribers.
 * Run alone: npx tsx bench/fanout-ceiling.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { appendAtRate, type PaceResult } from './lib/appender.js'
import { createDurableSession, json } from './lib/http.js'
import { startOurServer, startScriptServer, type ServerHandle } from './lib/processes.js'
import { countAt, type SubscriberReport } from './lib/sse-report.js'
import { fmt, int, median, table, verdict } from './lib/stats.js'
import { subscribe } from './fanout.js'

export interface CeilingOptions { runs: number, subscribers: number, rates: number[], seconds: number }

export interface CeilingRun {
  target: 'ours' | 'broadcaster'
  /** Offered events per second. */
  rate: number
  /** Events per subscriber not yet delivered when the last append was answered. */
  behind: number
  /** Deliveries per second at the subscribers while the appender ran (its first second excluded). */
  deliveriesPerS: number
  /** Events appended (answered 2xx). */
  appended: number
  appends: PaceResult
  report: SubscriberReport
  /** Every subscriber got every event by the end of the drain time. */
  complete: boolean
}

/** Drain time after the appender stops: every event must have arrived by then. */
const DRAIN_MS = 8000

async function measure (target: CeilingRun['target'], server: ServerHandle, options: CeilingOptions, rate: number): Promise<CeilingRun> {
  let url: string
  let path: string
  let okStatus: number
  let after = 0
  if (target === 'ours') {
    const id = await createDurableSession(server.baseUrl, '/bench/ceiling')
    after = (await json<{ entryCount: number }>(`${server.baseUrl}/v1/sessions/${id}`)).entryCount
    url = `${server.baseUrl}/v1/sessions/${id}/events`
    path = `/v1/sessions/${id}/entries`
    okStatus = 201
  } else {
    url = `${server.baseUrl}/events`
    path = '/publish'
    okStatus = 204
  }
  const count = rate * options.seconds
  const subs = await subscribe({ url, count: options.subscribers, after, expected: count, mode: 'count', timeoutMs: options.seconds * 1000 + DRAIN_MS })
  try {
    const appends = await appendAtRate({ origin: server.baseUrl, path, rate, count, okStatus, maxInFlight: 32 })
    const parts = await subs.reports
    const report = await subs.done
    const from = appends.startMs + 1000
    const to = appends.endMs
    const delivered = parts.reduce((sum, r) => sum + countAt(r.timeline ?? [], to) - countAt(r.timeline ?? [], from), 0)
    const deliveriesPerS = delivered / ((to - from) / 1000)
    // Count mode also counts the `retry:` frame each stream starts with.
    const complete = report.disconnected === 0 && report.minReceived === appends.ok + 1
    const deliveredAtEnd = parts.reduce((sum, r) => sum + countAt(r.timeline ?? [], to), 0) - options.subscribers
    const behind = Math.max(0, appends.ok - deliveredAtEnd / options.subscribers)
    return { target, rate, behind, deliveriesPerS, appended: appends.ok, appends, report, complete }
  } finally {
    await subs.stop()
  }
}

/** Alternates broadcaster and session-store runs; each server is started once. */
export async function measureCeiling (options: CeilingOptions): Promise<CeilingRun[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-ceiling-'))
  const [ours, broadcaster] = await Promise.all([startOurServer(dataDir), startScriptServer('bench/lib/broadcaster.ts')])
  const runs: CeilingRun[] = []
  try {
    for (const rate of options.rates) {
      for (let i = 0; i < options.runs; i++) {
        for (const target of ['broadcaster', 'ours'] as const) {
          const run = await measure(target, target === 'ours' ? ours : broadcaster, options, rate)
          process.stderr.write(`ceiling ${rate}/s run ${i + 1} ${target}: ${int(run.deliveriesPerS)} deliveries/s, ${fmt(run.behind, 0)} behind, complete ${run.complete}\n`)
          runs.push(run)
        }
      }
    }
    return runs
  } finally {
    await Promise.all([ours.stop(), broadcaster.stop()])
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The RESULTS.md section; the verdict uses the highest offered rate (saturation). */
export function ceilingSection (runs: CeilingRun[], options: CeilingOptions): string {
  const of = (t: CeilingRun['target'], rate: number): CeilingRun[] => runs.filter((r) => r.target === t && r.rate === rate)
  const row = (name: string, rate: number, rs: CeilingRun[]): string[] => [
    name, int(rate * options.subscribers), int(median(rs.map((r) => r.deliveriesPerS))), rs.map((r) => int(r.deliveriesPerS)).join(' / '),
    int(median(rs.map((r) => r.behind))), rs.every((r) => r.complete) ? 'yes' : 'no', fmt(median(rs.map((r) => r.report.cpuS)), 1),
  ]
  const top = Math.max(...options.rates)
  const ratios = of('ours', top).map((r, i) => r.deliveriesPerS / (of('broadcaster', top)[i] as CeilingRun).deliveriesPerS)
  const ratio = median(ratios)
  return [
    '## SSE fan-out ceiling (target 3, deliveries per second)',
    '',
    `${options.subscribers} subscribers (one separate process that counts frames) and a paced, open-loop appender of 1 KB events, ${options.seconds} s per run,`,
    `at two offered rates: one both servers keep up with, and one above what either delivers (saturation, the ceiling).`,
    'Deliveries/s = frames received by all subscribers per second while the appender ran, its first second excluded.',
    'session-store gets `POST /v1/sessions/{id}/entries` (durable appends) and serves `GET /v1/sessions/{id}/events`;',
    'the baseline (`bench/lib/broadcaster.ts`) gets `POST /publish` and writes one pre-serialized frame per event to',
    `every socket. Runs alternate between the two, ${options.runs} each per rate; "behind" = events per subscriber not yet`,
    `delivered when the last append was answered; "complete" = every subscriber got every event within ${DRAIN_MS / 1000} s after it.`,
    '',
    table(['server', 'offered deliveries/s', 'delivered/s (median)', 'per run', 'behind (events)', 'complete', 'subscriber CPU s'],
      options.rates.flatMap((rate) => [row('node:http broadcaster (baseline)', rate, of('broadcaster', rate)), row('session-store', rate, of('ours', rate))])),
    '',
    'Under saturation a session-store subscriber that falls behind reads the entries it missed by seq and gets them in',
    'writes of up to 32 KiB, where the broadcaster writes every frame to every socket separately; at the lower rate both',
    'deliver every event as it comes.',
    '',
    table(['target', 'measured', 'verdict'], [
      ['session-store ≥ 80 % of the broadcaster (saturated)', `×${fmt(ratio, 2)} (per run ${ratios.map((r) => fmt(r, 2)).join(' / ')})`, verdict(ratio >= 0.8)],
    ]),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = { runs: 3, subscribers: 100, rates: [1500, 4000], seconds: 5 }
  console.log(ceilingSection(await measureCeiling(options), options))
}
