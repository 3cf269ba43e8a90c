/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The dashboard in Debian's Chromium against the real server (compiled, disk storage): how long
 * a 10,000-entry session takes to open (target: under 2 s), whether scrolling through all of it
 * stays smooth (long tasks, frame gaps, DOM rows), and how soon an appended entry shows up in
 * an open page (target: within a second). The e2e test only bounds the DOM rows; the times are
 * measured here.
 * Run alone: npx tsx bench/ui-open.ts (writes bench/RESULTS-ui.md); `npm run bench` includes it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { launchChromium } from '../test/ui/browser.js'
import { append, seedLong, user } from '../test/ui/seed.js'
import { startOurServer } from './lib/processes.js'
import { fmt, int, median, table, verdict } from './lib/stats.js'

const ENTRIES = 10_000
const OPEN_TARGET_MS = 2000
const LIVE_TARGET_MS = 1000

export interface UiOpenRun { totalMs: number, readyMs: number, rows: number, treeRows: number }
export interface UiScroll { steps: number, maxRows: number, frameP50: number, frameP95: number, frameMax: number, longTasks: number, longestTaskMs: number, idle: Omit<UiScroll, 'idle'> }
export interface UiOpenResults { runs: UiOpenRun[], scroll: UiScroll, live: number[] }

export async function measureUiOpen (runs = 5, appends = 20): Promise<UiOpenResults> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-ui-'))
  const server = await startOurServer(dataDir)
  const browser = await launchChromium()
  try {
    const api = { baseUrl: server.baseUrl }
    const ids = await seedLong(api, 'long', ENTRIES)
    const last = ids.at(-1)!
    const url = `${server.baseUrl}/ui/sessions/long`
    const results: UiOpenRun[] = []
    for (let i = 0; i < runs; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } }) // a cold cache each run
      const page = await context.newPage()
      // tsx keeps function names with a `__name` helper that the page does not have.
      await page.addInitScript({ content: 'window.__name = (f) => f' })
      const start = performance.now()
      await page.goto(url)
      await page.locator(`.conversation [data-id="${last}"]`).waitFor({ timeout: 60_000 })
      const totalMs = performance.now() - start
      const readyMs = await page.evaluate(() => performance.getEntriesByName('session-ready')[0]?.startTime ?? NaN)
      results.push({ totalMs, readyMs, rows: await page.locator('.conversation [role=listitem]').count(), treeRows: await page.locator('.tree-row').count() })
      process.stderr.write(`ui open run ${i + 1}: ${fmt(totalMs, 0)} ms\n`)
      if (i < runs - 1) await context.close()
      else return { runs: results, scroll: await scrollThrough(page), live: await liveLatency(page, api, appends) }
    }
    throw new Error('no runs')
  } finally {
    await browser.close()
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/**
 * Scrolls from the end to the top a screen at a time, two frames per step; then, as a baseline
 * of what the shared machine alone costs, waits as many frames again without scrolling.
 */
async function scrollThrough (page: import('playwright-core').Page): Promise<UiScroll> {
  return await page.evaluate(async () => {
    const el = document.querySelector<HTMLElement>('.conversation')!
    const frame = async (): Promise<number> => await new Promise((resolve) => requestAnimationFrame(resolve))
    const run = async (scroll: boolean, frames: number): Promise<Omit<UiScroll, 'idle'>> => {
      const tasks: number[] = []
      const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) tasks.push(e.duration) })
      observer.observe({ type: 'longtask' })
      const gaps: number[] = []
      let maxRows = 0
      let steps = 0
      let before = await frame()
      while (scroll ? el.scrollTop > 0 : gaps.length < frames) {
        if (scroll) el.scrollTop -= el.clientHeight * 0.9
        steps++
        for (let i = 0; i < 2; i++) {
          const now = await frame()
          gaps.push(now - before)
          before = now
        }
        maxRows = Math.max(maxRows, el.querySelectorAll('[role=listitem]').length)
      }
      await new Promise((resolve) => setTimeout(resolve, 200)) // let the observer report
      observer.disconnect()
      gaps.sort((a, b) => a - b)
      const at = (p: number): number => gaps[Math.min(gaps.length - 1, Math.floor(p * gaps.length))]!
      return { steps, maxRows, frameP50: at(0.5), frameP95: at(0.95), frameMax: gaps.at(-1)!, longTasks: tasks.length, longestTaskMs: Math.max(0, ...tasks) }
    }
    const scrolling = await run(true, 0)
    return { ...scrolling, idle: await run(false, scrolling.steps * 2) }
  })
}

/** Milliseconds from the start of each append's POST to its row in the page (the reader at the end). */
async function liveLatency (page: import('playwright-core').Page, api: { baseUrl: string }, count: number): Promise<number[]> {
  await page.evaluate(() => {
    const seen: Record<string, number> = {}
    ;(window as unknown as { seen: Record<string, number> }).seen = seen
    const el = document.querySelector<HTMLElement>('.conversation')!
    el.scrollTop = el.scrollHeight
    new MutationObserver((records) => {
      for (const r of records) for (const n of r.addedNodes) if (n instanceof HTMLElement && n.dataset.id !== undefined) seen[n.dataset.id] ??= Date.now()
    }).observe(el, { childList: true, subtree: true })
  })
  const latencies: number[] = []
  for (let i = 0; i < count; i++) {
    const start = Date.now()
    const [id] = await append(api, 'long', [user(`Live entry ${i}`)])
    await page.waitForFunction((entryId) => (window as unknown as { seen: Record<string, number> }).seen[entryId!] !== undefined, id, { timeout: 10_000 })
    latencies.push(await page.evaluate((entryId) => (window as unknown as { seen: Record<string, number> }).seen[entryId!]!, id) - start)
  }
  return latencies
}

export function uiOpenSection (r: UiOpenResults): string {
  const open = median(r.runs.map((x) => x.totalMs))
  const live = [...r.live].sort((a, b) => a - b)
  const s = r.scroll
  return [
    '## Dashboard: opening and scrolling a 10,000-entry session, live entries',
    '',
    `A linear session of ${int(ENTRIES)} message entries (imported), opened at \`/ui/sessions/{id}\` in Debian's Chromium (headless,`,
    'driven by playwright-core) at 1280×800, a fresh browser context (cold cache) per run. "Open" runs from the start of the',
    'navigation until the last entry\'s row is in the DOM (all pages of entries fetched, the path, tree and rows rendered);',
    '"ready" is the page\'s own `session-ready` mark, from navigation start.',
    '',
    table(['run', 'open ms', 'ready ms', 'conversation rows in DOM', 'tree rows in DOM'],
      r.runs.map((x, i) => [String(i + 1), int(x.totalMs), int(x.readyMs), String(x.rows), String(x.treeRows)])),
    '',
    `Scrolling from the end to the top, ${s.steps} steps of 90 % of the viewport, two frames per step: frame gaps p50 ${fmt(s.frameP50)} ms,`,
    `p95 ${fmt(s.frameP95)} ms, max ${fmt(s.frameMax)} ms; ${s.longTasks} long tasks (> 50 ms), the longest ${fmt(s.longestTaskMs)} ms;`,
    `at most ${s.maxRows} conversation rows in the DOM at any step. The same number of frames right after, without`,
    `scrolling (what the shared machine alone costs): frame gaps p50 ${fmt(s.idle.frameP50)} ms, p95 ${fmt(s.idle.frameP95)} ms,`,
    `max ${fmt(s.idle.frameMax)} ms; ${s.idle.longTasks} long tasks, the longest ${fmt(s.idle.longestTaskMs)} ms.`,
    '',
    `Live: ${r.live.length} appends, one at a time, each from the start of its \`POST\` to its row in the open page:`,
    `p50 ${int(median(live))} ms, max ${int(live.at(-1)!)} ms.`,
    '',
    table(['target', 'measured', 'verdict'], [
      ['10,000-entry session opens in < 2 s (median)', `${int(open)} ms`, verdict(open < OPEN_TARGET_MS)],
      ['appended entries appear within 1 s (max)', `${int(live.at(-1)!)} ms`, verdict(live.at(-1)! < LIVE_TARGET_MS)],
    ]),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' / ')
  const loadBefore = load()
  const results = await measureUiOpen()
  const section = uiOpenSection(results)
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, Linux, ${new Date().toISOString().slice(0, 10)}`
  writeFileSync(join(import.meta.dirname, 'RESULTS-ui.md'), `# Dashboard benchmark results\n\nMachine: ${machine}. ` +
    `Load average (1/5/15 min) at the start ${loadBefore}, at the end ${load()}.\nRun by \`npx tsx bench/ui-open.ts\`; this file holds that run only.\n\n${section}\n`)
  process.stdout.write(`${section}\n`)
}
