/**
 * Scale: what a server costs as a function of what is stored, not of what is asked. For 1,000
 * and 100,000 stored sessions of 7 entries each (about 2 KB), on disk and on PostgreSQL, a server
 * as shipped is started on them (its index built beforehand: a restart) and measured: start to
 * `/readyz`, RSS once ready, CPU while idle for 20 s, the first listing page and the pages after
 * it, a `cwd` listing and the first `GET /context` of a session. Targets at 100,000: ready ≤ 3 s,
 * RSS at most 60 MB above the 1,000-session server's, idle CPU ≤ 2 % of a core, the first page
 * ≤ 200 ms and every later one ≤ 50 ms. Run alone: npx tsx bench/scale.ts [sizes…]
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { DEFAULT_TENANT } from '../src/auth/tokens.js'
import { writeManySessions } from './lib/generate.js'
import { withDatabase } from './lib/pg-database.js'
import { sessionOf, withPgStore } from './lib/pg-seed.js'
import { cpuSecondsOf, memoryOf, startOurServer, type ServerHandle } from './lib/processes.js'
import { metric } from './lib/server-memory.js'
import { fmt, int, median, mib, sleep, table, verdict } from './lib/stats.js'

const SIZES = [1000, 100_000]
const DIRS = 100
const IDLE_S = 20
const LATER_PAGES = 10

export interface ScaleRun {
  backend: 'disk' | 'postgres'
  sessions: number
  readyMs: number
  rss: number
  idleCpuPct: number
  firstPageMs: number
  laterPagesMs: number[]
  cwdMs: number
  contextMs: number
}

async function timed (url: string): Promise<{ ms: number, body: any }> {
  const start = performance.now()
  const res = await request(url)
  const body = await res.body.json() as any
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(body)}`)
  return { ms: performance.now() - start, body }
}

async function measure (server: ServerHandle, backend: ScaleRun['backend'], sessions: number, ids: string[]): Promise<ScaleRun> {
  const pid = server.child.pid
  const rss = memoryOf(pid).rss
  const cpu0 = cpuSecondsOf(pid)
  await sleep(IDLE_S * 1000)
  const idleCpuPct = (cpuSecondsOf(pid) - cpu0) / IDLE_S * 100
  const first = await timed(`${server.baseUrl}/v1/sessions?limit=50`)
  const laterPagesMs: number[] = []
  let cursor = first.body.nextCursor as string | null
  for (let i = 0; i < LATER_PAGES && cursor !== null; i++) {
    const page = await timed(`${server.baseUrl}/v1/sessions?limit=50&cursor=${encodeURIComponent(cursor)}`)
    laterPagesMs.push(page.ms)
    cursor = page.body.nextCursor
  }
  const cwd = await timed(`${server.baseUrl}/v1/sessions?limit=50&cwd=${encodeURIComponent('/bench/project-7')}`)
  const context = await timed(`${server.baseUrl}/v1/sessions/${ids[Math.floor(ids.length / 2)] as string}/context`)
  return { backend, sessions, readyMs: server.readyMs, rss, idleCpuPct, firstPageMs: first.ms, laterPagesMs, cwdMs: cwd.ms, contextMs: context.ms }
}

/** Resolves once `/metrics` shows the search index built and nothing waiting for it. */
async function searchSettled (baseUrl: string, timeoutMs: number): Promise<void> {
  const until = performance.now() + timeoutMs
  for (;;) {
    const res = await request(`${baseUrl}/metrics`)
    const text = await res.body.text()
    if (res.statusCode !== 200) throw new Error(`/metrics: ${res.statusCode}`)
    if (metric(text, 'ss_search_building') === 0 && metric(text, 'ss_search_pending') === 0) return
    if (performance.now() > until) throw new Error(`the search index was still being built after ${timeoutMs} ms`)
    await sleep(500)
  }
}

/**
 * Starts a server on `dataDir`, waits for its first listing (which waits for the index to be
 * checked against the files), then for the search index to hold every file, and stops it;
 * resolves the ms from start to that listing and to the search index built. The restart measured
 * after it then finds both indexes whole, as a server restarted in production does.
 */
async function firstStart (dataDir: string, env: Record<string, string>): Promise<{ listedMs: number, searchMs: number }> {
  const start = performance.now()
  const server = await startOurServer(dataDir, env, 600_000)
  try {
    const res = await request(`${server.baseUrl}/v1/sessions?limit=1`, { headersTimeout: 600_000 })
    await res.body.dump()
    if (res.statusCode !== 200) throw new Error(`first listing: ${res.statusCode}`)
    const listedMs = performance.now() - start
    await searchSettled(server.baseUrl, 1_800_000)
    return { listedMs, searchMs: performance.now() - start }
  } finally {
    await server.stop()
  }
}

/** Every session file below `dataDir`, as text. */
function * texts (dataDir: string): Generator<string> {
  const root = join(dataDir, 'sessions')
  for (const dir of readdirSync(root)) for (const name of readdirSync(join(root, dir))) yield readFileSync(join(root, dir, name), 'utf8')
}

/** Stores the sessions of `dataDir` in the database at `url`, 16 at a time. */
async function seed (url: string, dataDir: string): Promise<void> {
  await withPgStore(url, async (store) => {
    const all = [...texts(dataDir)]
    let next = 0
    const worker = async (): Promise<void> => {
      for (let i = next++; i < all.length; i = next++) await (await store.create(DEFAULT_TENANT, sessionOf(all[i] as string, Date.parse('2026-01-01T00:00:00.000Z') + i))).close()
    }
    await Promise.all(Array.from({ length: 16 }, worker))
  })
}

export async function measureScale (sizes = SIZES): Promise<ScaleRun[]> {
  const runs: ScaleRun[] = []
  for (const sessions of sizes) {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-scale-'))
    try {
      const { ids } = writeManySessions(dataDir, sessions, DIRS)
      // The first start on these files builds the index; the run measures the restart after it.
      const first = await firstStart(dataDir, {})
      process.stderr.write(`scale disk ${int(sessions)}: first start listed the files in ${fmt(first.listedMs, 0)} ms, searchable in ${fmt(first.searchMs, 0)} ms\n`)
      const disk = await startOurServer(dataDir)
      try {
        runs.push(await measure(disk, 'disk', sessions, ids))
      } finally {
        await disk.stop()
      }
      await withDatabase(async (url) => {
        await seed(url, dataDir)
        const emptyDir = mkdtempSync(join(tmpdir(), 'bench-scale-pg-'))
        const env = { STORAGE: 'postgres', DATABASE_URL: url }
        try {
          await firstStart(emptyDir, env)
          const pg = await startOurServer(emptyDir, env)
          try {
            runs.push(await measure(pg, 'postgres', sessions, ids))
          } finally {
            await pg.stop()
          }
        } finally {
          rmSync(emptyDir, { recursive: true, force: true })
        }
      })
      for (const run of runs.slice(-2)) process.stderr.write(`scale ${run.backend} ${int(sessions)}: ready ${fmt(run.readyMs, 0)} ms, first page ${fmt(run.firstPageMs)} ms\n`)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  return runs
}

export function scaleSection (runs: ScaleRun[]): string {
  const rows = runs.map((r) => [
    r.backend, int(r.sessions), fmt(r.readyMs, 0), mib(r.rss), fmt(r.idleCpuPct, 2), fmt(r.firstPageMs, 1),
    `${fmt(median(r.laterPagesMs), 1)} (max ${fmt(Math.max(...r.laterPagesMs), 1)})`, fmt(r.cwdMs, 1), fmt(r.contextMs, 1),
  ])
  const verdicts = (['disk', 'postgres'] as const).map((backend) => {
    const small = runs.find((r) => r.backend === backend && r.sessions === 1000)
    const large = runs.find((r) => r.backend === backend && r.sessions === 100_000)
    if (large === undefined) return `${backend}: no run at 100,000 sessions`
    const growth = small === undefined ? Number.NaN : (large.rss - small.rss) / 2 ** 20
    return [
      `${backend} at 100,000 sessions: ready ${fmt(large.readyMs, 0)} ms (≤ 3,000: ${verdict(large.readyMs <= 3000)}),`,
      `RSS ${fmt(growth, 1)} MiB above 1,000 sessions' (≤ 60 MB: ${verdict(growth * 1.048576 <= 60)}),`,
      `idle CPU ${fmt(large.idleCpuPct, 2)} % of a core (≤ 2 %: ${verdict(large.idleCpuPct <= 2)}),`,
      `first page ${fmt(large.firstPageMs, 1)} ms (≤ 200: ${verdict(large.firstPageMs <= 200)}),`,
      `later pages at most ${fmt(Math.max(...large.laterPagesMs), 1)} ms (≤ 50: ${verdict(Math.max(...large.laterPagesMs) <= 50)}).`,
    ].join(' ')
  })
  return [
    '## Scale: stored sessions against the cost of a server',
    '',
    `Sessions of 7 entries (about 2 KB) over ${DIRS} working directories; on disk in a DATA_DIR, on PostgreSQL in a database of`,
    'their own (stored as imports are). Each server is the second one started on its data (the first built the disk index or',
    `moved nothing), measured once ready: RSS, CPU over ${IDLE_S} s with no request, then \`GET /v1/sessions?limit=50\`, the`,
    `${LATER_PAGES} pages after it by cursor, a \`cwd\` listing (1/${DIRS} of the sessions) and the first \`GET /context\` of a session.`,
    '',
    table(['backend', 'sessions', 'ready ms', 'RSS MiB', 'idle CPU %', 'first page ms', 'later pages ms, median', 'cwd page ms', 'first context ms'], rows),
    '',
    ...verdicts.map((v) => `- ${v}`),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
  console.log(scaleSection(await measureScale(sizes.length > 0 ? sizes : SIZES)))
}
