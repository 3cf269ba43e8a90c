/**
 * SSE fan-out ceiling: the most deliveries per second (events × subscribers) session-store
 * sustains, against a minimal `node:http` broadcaster (`lib/broadcaster.ts`: each frame
 * serialized once into a Buffer shared by every subscriber, frames of one event-loop turn joined
 * into one write per socket), measured in the same run. Both get the same subscribers (separate
 * processes, counting frames) and the same paced appender; deliveries are counted at the
 * subscribers.
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
  const processes = Math.max(1, Math.ceil(options.subscribers / 500))
  const subs = await subscribe({ url, count: options.subscribers, after, expected: count, mode: 'count', timeoutMs: options.seconds * 1000 + DRAIN_MS }, processes)
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
  const low = Math.min(...options.rates)
  const keptUp = (t: CeilingRun['target'], rate: number): string => of(t, rate).every((r) => r.complete) ? 'delivered every event' : 'did not deliver every event in time'
  return [
    '## SSE fan-out ceiling (deliveries per second)',
    '',
    `${int(options.subscribers)} subscribers (${Math.max(1, Math.ceil(options.subscribers / 500))} separate processes that count frames) and a paced, open-loop appender of 1 KB events, ${options.seconds} s per run,`,
    `at ${options.rates.length} offered rates (${options.rates.map((r) => `${int(r)} events/s`).join(', ')}); the highest is meant to be above what either delivers (saturation).`,
    'Deliveries/s = frames received by all subscribers per second while the appender ran, its first second excluded.',
    'session-store gets `POST /v1/sessions/{id}/entries` (durable appends: each event is written and `fdatasync`ed before it',
    'is streamed) and serves `GET /v1/sessions/{id}/events`; the baseline (`bench/lib/broadcaster.ts`, no storage) gets',
    '`POST /publish`, serializes each frame once into one Buffer shared by every subscriber and writes the frames of one',
    `event-loop turn to each socket in one write. Runs alternate between the two, ${options.runs} each per rate; "behind" = events per`,
    `subscriber not yet delivered when the last append was answered; "complete" = every subscriber got every event within ${DRAIN_MS / 1000} s after it.`,
    '',
    table(['server', 'offered deliveries/s', 'delivered/s (median)', 'per run', 'behind (events)', 'complete', 'subscriber CPU s'],
      options.rates.flatMap((rate) => [row('minimal broadcaster (baseline)', rate, of('broadcaster', rate)), row('session-store', rate, of('ours', rate))])),
    '',
    `At ${int(low)} events/s the broadcaster ${keptUp('broadcaster', low)} and session-store ${keptUp('ours', low)} (column "complete").`,
    '',
    table(['target', 'measured', 'verdict'], [
      [`session-store ≥ 1.0 × the broadcaster at ${int(top)} events/s offered`, `×${fmt(ratio, 2)} (per run ${ratios.map((r) => fmt(r, 2)).join(' / ')})`, verdict(ratio >= 1.0)],
    ]),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = { runs: 3, subscribers: 1000, rates: [50, 1000], seconds: 4 }
  console.log(ceilingSection(await measureCeiling(options), options))
}
