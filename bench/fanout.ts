/**
 * SSE fan-out (target 3). Scenario A: 100 subscribers on one session, 200 appends/s of 1 KB for
 * 30 s; scenario B: 1,000 subscribers, 50 appends/s for 30 s. Process layout: the server
 * (`npm start` as shipped) in one process, every subscriber in a second one (`lib/sse-subscribers.ts`),
 * the paced appender in this one. Each scenario gets a fresh server.
 * Run alone: npx tsx bench/fanout.ts [A|B]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { appendAtRate, type PaceResult } from './lib/appender.js'
import { createDurableSession } from './lib/http.js'
import { spawnScript, startOurServer, type ServerHandle } from './lib/processes.js'
import { mergeReports, summarizeHistogram, type SubscriberConfig, type SubscriberReport } from './lib/sse-report.js'
import { fmt, int, mib, table, verdict } from './lib/stats.js'

export interface Scenario {
  name: string
  subscribers: number
  rate: number
  seconds: number
  p99TargetMs: number
  /** Subscriber processes the subscribers are split over. */
  processes: number
}

export const SCENARIOS: Scenario[] = [
  { name: 'A', subscribers: 100, rate: 200, seconds: 30, p99TargetMs: 10, processes: 1 },
  { name: 'B', subscribers: 1000, rate: 50, seconds: 30, p99TargetMs: 60, processes: 2 },
]

/** RSS growth allowed over the run, bytes. */
const RSS_GROWTH_LIMIT = 200 * 2 ** 20

export interface ScenarioResult {
  scenario: Scenario
  appends: PaceResult
  report: SubscriberReport
  rssBefore: number
  rssConnected: number
  rssPeak: number
}

/** Samples `server`'s RSS every 250 ms until stopped; resolves the peak. */
function sampleRss (server: ServerHandle): { stop: () => number } {
  let peak = server.child.memory().rss
  const timer = setInterval(() => { peak = Math.max(peak, server.child.memory().rss) }, 250)
  return { stop: () => { clearInterval(timer); return Math.max(peak, server.child.memory().rss) } }
}

/**
 * Starts `config.count` subscribers split over `processes` processes and resolves once every
 * stream answered 200; `done` resolves the merged report.
 */
export async function subscribe (config: SubscriberConfig, processes = 1): Promise<{ done: Promise<SubscriberReport>, reports: Promise<SubscriberReport[]>, stop: () => Promise<void> }> {
  const children = Array.from({ length: processes }, (_, i) => {
    const count = Math.floor(config.count / processes) + (i < config.count % processes ? 1 : 0)
    return spawnScript('bench/lib/sse-subscribers.ts', [JSON.stringify({ ...config, count })])
  })
  try {
    await Promise.all(children.map(async (c) => await c.message((m) => m.ready !== undefined, 60_000)))
  } catch (err) {
    await Promise.all(children.map(async (c) => { await c.stop() }))
    throw err
  }
  const reports = Promise.all(children.map(async (c) =>
    (await c.message<{ report: SubscriberReport }>((m) => m.report !== undefined, config.timeoutMs + 30_000)).report))
  return { done: reports.then(mergeReports), reports, stop: async () => { await Promise.all(children.map(async (c) => { await c.stop() })) } }
}

export async function runScenario (scenario: Scenario): Promise<ScenarioResult> {
  const dataDir = mkdtempSync(join(tmpdir(), `bench-fanout-${scenario.name}-`))
  const server = await startOurServer(dataDir)
  try {
    const id = await createDurableSession(server.baseUrl, '/bench/fanout')
    const path = `/v1/sessions/${id}/entries`
    // Warm the append path (JIT) before anything is measured.
    await appendAtRate({ origin: server.baseUrl, path, rate: 500, count: 500, okStatus: 201, bodyIncludes: '"persisted":true' })
    const after = 501 // the assistant message plus the warm-up
    const rssBefore = server.child.memory().rss
    const count = scenario.rate * scenario.seconds
    const subs = await subscribe({
      url: `${server.baseUrl}/v1/sessions/${id}/events`,
      count: scenario.subscribers,
      after,
      expected: count,
      mode: 'latency',
      timeoutMs: (scenario.seconds + 30) * 1000,
    }, scenario.processes)
    const rssConnected = server.child.memory().rss
    const sampler = sampleRss(server)
    const appends = await appendAtRate({ origin: server.baseUrl, path, rate: scenario.rate, count, okStatus: 201, bodyIncludes: '"persisted":true' })
    const report = await subs.done
    const rssPeak = sampler.stop()
    await subs.stop()
    return { scenario, appends, report, rssBefore, rssConnected, rssPeak }
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

function complete (r: ScenarioResult): boolean {
  const { report, appends, scenario } = r
  return appends.ok === appends.sent && appends.failed === 0 && report.disconnected === 0 &&
    report.orderErrors === 0 && report.minReceived === scenario.rate * scenario.seconds
}

/** The RESULTS.md section for scenarios A and B. */
export function fanoutSection (results: ScenarioResult[]): string {
  const rows = results.map((r) => {
    const a = r.report.sinceAppend === undefined ? undefined : summarizeHistogram(r.report.sinceAppend)
    const s = r.report.sinceSend === undefined ? undefined : summarizeHistogram(r.report.sinceSend)
    return [
      r.scenario.name, int(r.scenario.subscribers), `${r.scenario.rate}/s × ${r.scenario.seconds} s`,
      `${int(r.appends.ok)} / ${int(r.appends.sent)}`, `${int(r.report.minReceived)}–${int(r.report.maxReceived)}`,
      `${r.report.orderErrors} / ${r.report.disconnected}`,
      fmt(a?.p50 ?? NaN, 0), fmt(a?.p99 ?? NaN, 0), fmt(a?.max ?? NaN, 0), fmt(s?.p99 ?? NaN, 0),
      mib(r.rssBefore), mib(r.rssPeak - r.rssBefore),
    ]
  })
  const targets = results.flatMap((r) => {
    const p99 = r.report.sinceAppend === undefined ? Number.POSITIVE_INFINITY : summarizeHistogram(r.report.sinceAppend).p99
    const growth = r.rssPeak - r.rssBefore
    return [
      [`${r.scenario.name}: p99 delivery ≤ ${r.scenario.p99TargetMs} ms`, `${fmt(p99, 0)} ms`, verdict(p99 <= r.scenario.p99TargetMs)],
      [`${r.scenario.name}: every subscriber gets every entry, in order`, complete(r) ? 'yes' : 'no', verdict(complete(r))],
      [`${r.scenario.name}: server RSS growth ≤ 200 MB`, `${mib(growth)} MiB`, verdict(growth <= RSS_GROWTH_LIMIT)],
    ]
  })
  return [
    '## SSE fan-out (target 3, scenarios A and B)',
    '',
    'One durable session; the appender (this process) posts 1 KB `message` entries at a fixed rate (open loop) to',
    '`POST /v1/sessions/{id}/entries`; the subscribers run in separate processes (`bench/lib/sse-subscribers.ts`,',
    '`node:http`, one socket each, `Last-Event-ID` set to the entry before the first measured one; one process for A, two',
    'of 500 for B, so parsing 50,000 events/s does not queue behind one event loop), never in the server\'s process; on',
    'two cores they still share the machine with it. Delivery latency = receive time − the entry\'s `timestamp`',
    '(assigned by the server when it accepted the append, so it includes the group commit and fsync: SSE only shows',
    'durable entries); "since send" measures from the appender\'s send time written into the entry text. A subscriber',
    'checks that event ids are consecutive from its resume point. RSS is the server\'s VmRSS: before the subscribers',
    'connect, and the peak sampled every 250 ms until the last event arrived. One 30 s run per scenario (the duration the',
    'targets name); a fresh server each.',
    '',
    table(['scenario', 'subscribers', 'appends', 'answered 201 persisted', 'events per subscriber', 'order errors / drops',
      'p50 ms', 'p99 ms', 'max ms', 'p99 since send ms', 'RSS before MiB', 'RSS growth MiB'], rows),
    '',
    table(['target', 'measured', 'verdict'], targets),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const only = process.argv[2]
  const results: ScenarioResult[] = []
  for (const s of SCENARIOS) if (only === undefined || s.name === only) results.push(await runScenario(s))
  console.log(fanoutSection(results))
  for (const r of results) {
    const { sinceAppend, sinceSend, timeline: _t, ...rest } = r.report
    console.log(r.scenario.name, JSON.stringify({ ...rest, sinceAppend: sinceAppend && summarizeHistogram(sinceAppend), sinceSend: sinceSend && summarizeHistogram(sinceSend), appends: r.appends }))
  }
}
