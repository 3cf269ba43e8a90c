/**
 * Two servers on one PostgreSQL database (STORAGE=postgres): delivery of live entries across
 * servers. 100 subscribers on one session, 200 appends/s of 1 KB posted to server A; the
 * subscribers listen on server B (cross-server: B learns of each commit from the database) and,
 * as the baseline of the same run, on A itself. Both servers run throughout, on one database.
 * Run alone: npx tsx bench/pg-multi.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { subscribe } from './fanout.js'
import { appendAtRate, type PaceResult } from './lib/appender.js'
import { createDurableSession, json } from './lib/http.js'
import { withDatabase } from './lib/pg-database.js'
import { startOurServer } from './lib/processes.js'
import { summarizeHistogram, type LatencySummary, type SubscriberReport } from './lib/sse-report.js'
import { fmt, int, table, verdict } from './lib/stats.js'

export interface MultiOptions { subscribers: number, rate: number, seconds: number }
export interface MultiRun { where: 'same server (A)' | 'other server (B)', appends: PaceResult, report: SubscriberReport, latency: LatencySummary | undefined }

const TARGET_P99_MS = 50

export async function measureMulti (options: MultiOptions): Promise<MultiRun[]> {
  return await withDatabase(async (url) => {
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'bench-pg-multi-')))
    const env = { STORAGE: 'postgres', DATABASE_URL: url }
    const a = await startOurServer(dirs[0] as string, env)
    const b = await startOurServer(dirs[1] as string, env)
    try {
      const runs: MultiRun[] = []
      for (const [where, listen] of [['other server (B)', b], ['same server (A)', a]] as const) {
        const id = await createDurableSession(a.baseUrl, '/bench/pg-multi')
        const path = `/v1/sessions/${id}/entries`
        await appendAtRate({ origin: a.baseUrl, path, rate: 500, count: 500, okStatus: 201, bodyIncludes: '"persisted":true' }) // warm-up
        await json(`${listen.baseUrl}/v1/sessions/${id}`, { method: 'GET', expect: 200 })
        const count = options.rate * options.seconds
        const subs = await subscribe({
          url: `${listen.baseUrl}/v1/sessions/${id}/events`, count: options.subscribers, after: 501, expected: count, mode: 'latency', timeoutMs: (options.seconds + 30) * 1000,
        })
        const appends = await appendAtRate({ origin: a.baseUrl, path, rate: options.rate, count, okStatus: 201, bodyIncludes: '"persisted":true' })
        const report = await subs.done
        await subs.stop()
        runs.push({ where, appends, report, latency: report.sinceAppend === undefined ? undefined : summarizeHistogram(report.sinceAppend) })
      }
      return runs
    } finally {
      await a.stop()
      await b.stop()
      for (const d of dirs) rmSync(d, { recursive: true, force: true })
    }
  })
}

export function multiSection (runs: MultiRun[], options: MultiOptions): string {
  const rows = runs.map((r) => [
    r.where, `${int(r.appends.ok)} / ${int(r.appends.sent)}`, `${int(r.report.minReceived)}–${int(r.report.maxReceived)}`,
    `${r.report.orderErrors} / ${r.report.disconnected}`, fmt(r.latency?.p50 ?? NaN, 0), fmt(r.latency?.p99 ?? NaN, 0), fmt(r.latency?.max ?? NaN, 0),
  ])
  const cross = runs.find((r) => r.where === 'other server (B)')
  const base = runs.find((r) => r.where === 'same server (A)')
  const p99 = cross?.latency?.p99 ?? Number.POSITIVE_INFINITY
  const complete = (r: MultiRun | undefined): boolean => r !== undefined && r.appends.failed === 0 && r.report.orderErrors === 0 &&
    r.report.disconnected === 0 && r.report.minReceived === options.rate * options.seconds
  return [
    '## Two servers on one PostgreSQL database: live entries across servers',
    '',
    `Two servers as shipped with \`STORAGE=postgres\` on one fresh local database, both running throughout. ${options.subscribers} subscribers`,
    `(one process, as in the fan-out section) on one durable session; the appender posts 1 KB \`message\` entries at ${options.rate}/s for`,
    `${options.seconds} s to server A (open loop). Cross-server: the subscribers listen on server B, which learns of each commit`,
    'from the database (a notification, then it reads the entries appended after those it holds); baseline, same run: they',
    'listen on server A itself.',
    'Each case has its own session. Delivery latency = receive time − the entry\'s `timestamp` (set by A when it accepted',
    'the append, so it includes the commit). Columns as in the fan-out section.',
    '',
    table(['subscribers on', 'appends ok / sent', 'entries per subscriber', 'order errors / disconnects', 'p50 ms', 'p99 ms', 'max ms'], rows),
    '',
    table(['target', 'measured', 'verdict'], [
      [`cross-server p99 delivery ≤ ${TARGET_P99_MS} ms`, `${fmt(p99, 0)} ms (same server: ${fmt(base?.latency?.p99 ?? NaN, 0)} ms)`, verdict(p99 <= TARGET_P99_MS)],
      ['every subscriber gets every entry, in order (both cases)', complete(cross) && complete(base) ? 'yes' : 'no', verdict(complete(cross) && complete(base))],
    ]),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const options = { subscribers: 100, rate: 200, seconds: 15 }
  process.stdout.write(multiSection(await measureMulti(options), options) + '\n')
}
