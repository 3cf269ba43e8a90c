/**
 * `npx tsx bench/heap-growth.ts`: how far the heap of a process shaped like the soaked server
 * grows past its live data, with V8's own heap growing factor and with the factor the server fixes
 * (src/heap-growth.ts). Each run is a child process that keeps LIVE_MIB of 256 KiB strings alive
 * (unsaved sessions) while it makes CHURN_PAGES listing-like answers, the last WINDOW of which stay
 * alive long enough to reach the old generation, as answers waiting on slow clients do. It reports
 * the live heap after a full collection, the highest heap total and RSS, the CPU time the run took
 * (the price of collecting more often), and writes its own section of bench/RESULTS.md. Its
 * figures depend on what is allocated far more than on the load.
 */
import { spawnSync } from 'node:child_process'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from '../src/heap-growth.js'
import { fmt, mib, table, writeSection } from './lib/stats.js'

const LIVE_MIB = 300
const CHURN_PAGES = 60_000
const WINDOW = 3000
const HEADING = '## Heap growth past the live data (`npx tsx bench/heap-growth.ts`)'

interface Reading { live: number, heapTotal: number, rss: number, cpuSeconds: number }

/** The child: allocate, churn, report (one JSON line). */
function churn (): void {
  const gc = (globalThis as { gc?: () => void }).gc as () => void
  if (process.argv.includes('--bound')) boundHeapGrowth()
  const live = Array.from({ length: LIVE_MIB * 4 }, (_, i) => Buffer.alloc(256 * 1024, 97 + (i % 26)).toString('latin1'))
  let heapTotal = 0
  let rss = 0
  const recent: string[] = []
  for (let i = 0; i < CHURN_PAGES; i++) {
    const page = Array.from({ length: 14 }, (_, j) => ({ id: `s${j}`, firstMessage: Buffer.alloc(1024, 120).toString('latin1') + i }))
    recent.push(JSON.stringify(page))
    if (recent.length > WINDOW) recent.shift()
    if (i % 500 === 0) {
      const m = process.memoryUsage()
      heapTotal = Math.max(heapTotal, m.heapTotal)
      rss = Math.max(rss, m.rss)
    }
  }
  gc()
  const cpu = process.cpuUsage()
  const reading: Reading = { live: process.memoryUsage().heapUsed, heapTotal, rss, cpuSeconds: (cpu.user + cpu.system) / 1e6 }
  process.stdout.write(JSON.stringify({ ...reading, kept: live.length + recent.length }) + '\n')
}

function run (nodeArgs: string[], childArgs: string[]): Reading {
  const child = spawnSync(process.execPath, [...nodeArgs, '--expose-gc', '--import', 'tsx', import.meta.filename, '--child', ...childArgs], { encoding: 'utf8' })
  if (child.status !== 0) throw new Error(`child failed: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split('\n').pop() as string) as Reading
}

function main (): void {
  const load = loadavg().map((l) => l.toFixed(1)).join(' / ')
  const own = run(['--heap-growing-percent=0'], [])
  const bound = run([], ['--bound'])
  const row = (name: string, r: Reading): string[] => [name, mib(r.live), mib(r.heapTotal), (r.heapTotal / r.live).toFixed(2), mib(r.rss), fmt(r.cpuSeconds)]
  const section = [
    HEADING,
    '',
    `${new Date().toISOString().slice(0, 10)}, load average (1 / 5 / 15 min) ${load} at the start. A child process keeps ${LIVE_MIB} MiB of`,
    `256 KiB strings alive and makes ${CHURN_PAGES} listing-like answers of 14 items, the last ${WINDOW} of them alive at any time.`,
    '',
    table(['heap growing factor', 'live heap after a full collection (MiB)', 'highest heap total (MiB)', 'highest heap total / live', 'highest RSS (MiB)', 'CPU time, all threads (s)'], [
      row('V8\'s own (`--heap-growing-percent=0`)', own),
      row(`fixed by the server (${1 + HEAP_GROWING_PERCENT / 100})`, bound),
    ]),
    '',
  ].join('\n')
  process.stdout.write(section + '\n')
  writeSection(join(import.meta.dirname, 'RESULTS.md'), HEADING, section)
}

if (process.argv.includes('--child')) churn()
else main()
