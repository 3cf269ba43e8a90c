/**
 * The server as users run it on PostgreSQL (`STORAGE=postgres`, `DATABASE_URL`, everything else
 * default) against the same server on disk (the default), in one run:
 * - durable appends over HTTP, 1 session × 100 connections and 100 sessions × 1 connection,
 *   the four loads interleaved round by round, as a ratio of the disk server's;
 * - opening a 100,000-entry session the server has not loaded: the first `GET /context` after a
 *   start, from the database, beside the same first request of the disk server on the same file.
 * The database is a fresh one on `BENCH_DATABASE_URL`'s server (127.0.0.1 by default), dropped afterwards.
 * Run alone: npx tsx bench/pg-server.ts (rewrites its section of RESULTS.md; PG_SERVER_WRITE=0 only prints it);
 * PG_SERVER_ONLY=open measures and prints only the first opens.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate } from '../src/storage/postgres/migrate.js'
import { createPool } from '../src/storage/postgres/pool.js'
import { checkClean, runCannon, type CannonConfig, type CannonSummary } from './lib/cannon.js'
import { writeDeepSession } from './lib/generate.js'
import { createDurableSession, messageBody } from './lib/http.js'
import { withDatabase } from './lib/pg-database.js'
import { storeTexts } from './lib/pg-seed.js'
import { buildOnce, cpuSecondsOf, startOurServer, type ServerHandle } from './lib/processes.js'
import { fmt, int, median, table, verdict, writeSection } from './lib/stats.js'

const CONNECTIONS = 100
const BODY = messageBody(1024)
const JSON_HEADERS = { 'content-type': 'application/json' }
const OPEN_ENTRIES = 100_000
const HEADING = '## PostgreSQL storage over HTTP against disk'

export interface PgServerOptions { rounds: number, durationS: number, warmupS: number }

type Backend = 'disk' | 'pg'
type Shape = 'one' | 'many'
const LOADS: Array<{ backend: Backend, shape: Shape }> = [
  { backend: 'disk', shape: 'one' }, { backend: 'pg', shape: 'one' },
  { backend: 'disk', shape: 'many' }, { backend: 'pg', shape: 'many' },
]
const SHAPE_LABEL: Record<Shape, string> = { one: `1 session × ${CONNECTIONS} connections`, many: `${CONNECTIONS} sessions × 1 connection` }

interface Run { summary: CannonSummary, cores: number, load1: number }

export interface PgServerResults {
  runs: Record<`${Backend}-${Shape}`, Run[]>
  /** Entries per transaction on the PostgreSQL server over all loads (its `ss_commit_batch_entries{storage="postgres"}`). */
  pgEntriesPerCommit: number
  open: { disk: OpenRun[], pg: OpenRun[], bytes: number }
  /** When the measurement started (UTC), and the load average (1/5/15 min) at its start and end. */
  startedAt: string
  loadStart: number[]
  loadEnd: number[]
}

interface OpenRun { firstMs: number, secondMs: number, status: number, messages: number, load1: number }

function load (server: ServerHandle, sessions: string[], shape: Shape, durationS: number): CannonConfig {
  const path = (id: string): string => `/v1/sessions/${id}/entries`
  return {
    url: `${server.baseUrl}${path(sessions[0] as string)}`,
    connections: CONNECTIONS,
    durationS,
    method: 'POST',
    headers: JSON_HEADERS,
    body: BODY,
    bodyIncludes: '"persisted":true',
    ...(shape === 'many' ? { paths: sessions.map(path) } : {}),
  }
}

/**
 * Sum and count of the server's commit batch histogram for its database transactions
 * (`storage="postgres"`: one observation per transaction, however many sessions it wrote).
 */
async function commitBatches (server: ServerHandle): Promise<{ sum: number, count: number }> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text()
  const value = (name: string): number => {
    let total = 0
    for (const m of text.matchAll(new RegExp(`^${name}\\{storage="postgres"\\} (\\S+)$`, 'gm'))) total += Number(m[1])
    return total
  }
  return { sum: value('ss_commit_batch_entries_sum'), count: value('ss_commit_batch_entries_count') }
}

async function appendLoads (url: string, options: PgServerOptions): Promise<Pick<PgServerResults, 'runs' | 'pgEntriesPerCommit'>> {
  const diskDir = mkdtempSync(join(tmpdir(), 'bench-pgserver-disk-'))
  const pgDir = mkdtempSync(join(tmpdir(), 'bench-pgserver-pg-'))
  const servers: Partial<Record<Backend, ServerHandle>> = {}
  try {
    servers.disk = await startOurServer(diskDir)
    servers.pg = await startOurServer(pgDir, { STORAGE: 'postgres', DATABASE_URL: url })
    const sessions: Record<Backend, string[]> = { disk: [], pg: [] }
    for (const b of ['disk', 'pg'] as const) {
      for (let i = 0; i < CONNECTIONS; i++) sessions[b].push(await createDurableSession((servers[b] as ServerHandle).baseUrl, `/bench/pg/${i % 10}`))
    }
    for (const l of LOADS) checkClean(`${l.backend} ${l.shape} warm-up`, await runCannon(load(servers[l.backend] as ServerHandle, sessions[l.backend], l.shape, options.warmupS)))
    const before = await commitBatches(servers.pg)
    const runs = Object.fromEntries(LOADS.map((l) => [`${l.backend}-${l.shape}`, []])) as unknown as PgServerResults['runs']
    for (let round = 0; round < options.rounds; round++) {
      for (const l of LOADS) {
        const server = servers[l.backend] as ServerHandle
        const cpu0 = cpuSecondsOf(server.child.pid)
        const load1 = loadavg()[0] as number
        const summary = await runCannon(load(server, sessions[l.backend], l.shape, options.durationS))
        checkClean(`${l.backend} ${l.shape}`, summary)
        runs[`${l.backend}-${l.shape}`].push({ summary, cores: (cpuSecondsOf(server.child.pid) - cpu0) / summary.durationS, load1 })
        process.stderr.write(`pgserver round ${round + 1} ${l.backend} ${l.shape}: ${int(summary.rps)} req/s p99 ${summary.p99} ms, load ${fmt(load1, 2)}\n`)
      }
    }
    const after = await commitBatches(servers.pg)
    return { runs, pgEntriesPerCommit: (after.sum - before.sum) / (after.count - before.count) }
  } finally {
    await Promise.all(Object.values(servers).map(async (s) => { await s.stop() }))
    for (const dir of [diskDir, pgDir]) rmSync(dir, { recursive: true, force: true })
  }
}

/** First and second `GET /context` of a server started just before; the session is not loaded yet. */
async function timeOpen (server: ServerHandle, id: string): Promise<OpenRun> {
  const get = async (): Promise<{ ms: number, status: number, messages: number }> => {
    const start = performance.now()
    const res = await fetch(`${server.baseUrl}/v1/sessions/${id}/context`)
    const text = await res.text()
    const ms = performance.now() - start
    return { ms, status: res.status, messages: res.status === 200 ? (JSON.parse(text) as { messages: unknown[] }).messages.length : -1 }
  }
  const load1 = loadavg()[0] as number
  const first = await get()
  const second = await get()
  return { firstMs: first.ms, secondMs: second.ms, status: first.status, messages: first.messages, load1 }
}

/**
 * The same 100,000-entry chain on disk and in the database (stored as an import stores it); runs
 * alternate between a fresh disk server and a fresh PostgreSQL server.
 */
async function openLoads (url: string, runs: number): Promise<PgServerResults['open']> {
  const diskDir = mkdtempSync(join(tmpdir(), 'bench-pgserver-open-disk-'))
  const pgDir = mkdtempSync(join(tmpdir(), 'bench-pgserver-open-pg-'))
  try {
    const session = writeDeepSession(diskDir, OPEN_ENTRIES)
    await storeTexts(url, [readFileSync(session.path, 'utf8')])
    const out: PgServerResults['open'] = { disk: [], pg: [], bytes: session.bytes }
    for (let r = 0; r < runs; r++) {
      for (const backend of ['disk', 'pg'] as const) {
        const server = backend === 'disk' ? await startOurServer(diskDir) : await startOurServer(pgDir, { STORAGE: 'postgres', DATABASE_URL: url })
        try {
          const run = await timeOpen(server, session.id)
          if (run.status !== 200 || run.messages !== OPEN_ENTRIES) throw new Error(`${backend} open: status ${run.status}, ${run.messages} messages`)
          out[backend].push(run)
          process.stderr.write(`pgserver open ${backend}: first ${fmt(run.firstMs, 0)} ms, second ${fmt(run.secondMs, 0)} ms, load ${fmt(run.load1, 2)}\n`)
        } finally {
          await server.stop()
        }
      }
    }
    return out
  } finally {
    for (const dir of [diskDir, pgDir]) rmSync(dir, { recursive: true, force: true })
  }
}

export async function measurePgServer (options: PgServerOptions): Promise<PgServerResults> {
  const startedAt = new Date().toISOString().slice(0, 16).replace('T', ' ')
  const loadStart = loadavg()
  return await withDatabase(async (url) => {
    const setup = createPool(url, { max: 1 })
    await migrate(setup)
    await setup.end()
    // The opens first: after the append loads, the database is still checkpointing and vacuuming their rows.
    const open = await openLoads(url, options.rounds)
    const appends = await appendLoads(url, options)
    return { ...appends, open, startedAt, loadStart, loadEnd: loadavg() }
  })
}

export function pgServerSection (r: PgServerResults, options: PgServerOptions): string {
  const rps = (runs: Run[]): number[] => runs.map((x) => x.summary.rps)
  const appendRows = LOADS.map((l) => {
    const runs = r.runs[`${l.backend}-${l.shape}`]
    return [`${l.backend === 'pg' ? 'PostgreSQL' : 'disk (baseline)'}, ${SHAPE_LABEL[l.shape]}`, int(median(rps(runs))), rps(runs).map(int).join(' / '),
      fmt(median(runs.map((x) => x.summary.p50)), 0), fmt(median(runs.map((x) => x.summary.p99)), 0), fmt(median(runs.map((x) => x.cores)), 2),
      runs.map((x) => fmt(x.load1, 1)).join(' / ')]
  })
  const ratios = (shape: Shape): number[] => r.runs[`pg-${shape}`].map((x, i) => x.summary.rps / (r.runs[`disk-${shape}`][i] as Run).summary.rps)
  const ratioRow = (shape: Shape): string[] => {
    const values = ratios(shape)
    return [`PostgreSQL ÷ disk, ${SHAPE_LABEL[shape]} (req/s)`, `×${fmt(median(values), 2)}`, values.map((v) => fmt(v, 2)).join(' / '), '≥ ×0.50', verdict(median(values) >= 0.5)]
  }
  return [
    HEADING,
    '',
    `Measured ${r.startedAt} UTC; load average (1/5/15 min) ${r.loadStart.map((l) => fmt(l, 1)).join(' / ')} at the start, ${r.loadEnd.map((l) => fmt(l, 1)).join(' / ')} at the end.`,
    'Every figure of this section was measured by that run, each beside its baseline from the same run.',
    '',
    'The server as shipped (see the top of this file), once with `STORAGE=postgres` and `DATABASE_URL` (a database created for',
    'the run on 127.0.0.1, `synchronous_commit` on: an append is answered `persisted: true` only once its transaction',
    'committed), once on disk (the default, the baseline); everything else default. One 1,024-byte `message` entry per request,',
    `${CONNECTIONS} connections (autocannon in its own process); ${options.durationS} s per load, ${options.rounds} rounds with the 4 loads interleaved`,
    `in each (after a ${options.warmupS} s warm-up of each), medians over the rounds; every answer was checked to hold \`"persisted":true\` and`,
    'every load had zero non-2xx, errors and timeouts. "Load" is the 1-minute load average when each load started.',
    '',
    table(['load', 'req/s (median)', 'req/s per round', 'p50 ms', 'p99 ms', 'server CPU (cores)', 'load per round'], appendRows),
    '',
    table(['ratio', 'median', 'per round', 'target', 'verdict'], [ratioRow('one'), ratioRow('many')]),
    '',
    `The PostgreSQL server committed ${fmt(r.pgEntriesPerCommit, 1)} entries per transaction on average over these loads (its \`ss_commit_batch_entries{storage="postgres"}\`; a transaction commits the appends of every session waiting at that moment).`,
    '',
    `Opening a ${int(OPEN_ENTRIES)}-entry session (a linear chain, \`bench/lib/generate.ts\`, ${fmt(r.open.bytes / 2 ** 20)} MiB as a file) the server has not`,
    'loaded: each run starts a fresh server, then times the first `GET /context` (request to last byte: reading every line from',
    'the database or the file, building the session and its context, sending the answer) and a second one. The PostgreSQL',
    'server holds the session as rows (stored the way the server stores a session file), read from an empty DATA_DIR;',
    `the disk server reads the same file. Runs alternate between the two; ${options.rounds} each. The opens run before the`,
    'append loads above, on the fresh database: after those loads PostgreSQL spends a while checkpointing and vacuuming their rows.',
    '',
    openTables(r.open),
  ].join('\n')
}

/** The tables of the first opens, PostgreSQL beside disk, and the verdict. */
function openTables (open: PgServerResults['open']): string {
  const openRow = (name: string, runs: OpenRun[]): string[] => [name, fmt(median(runs.map((x) => x.firstMs)), 0), runs.map((x) => fmt(x.firstMs, 0)).join(' / '),
    fmt(median(runs.map((x) => x.secondMs)), 0), runs.map((x) => fmt(x.load1, 1)).join(' / ')]
  const pgOpen = median(open.pg.map((x) => x.firstMs))
  return [
    table(['server', 'first GET /context ms (median)', 'per run', 'second ms (median)', 'load per run'], [
      openRow('disk (baseline)', open.disk), openRow('PostgreSQL', open.pg),
    ]),
    '',
    table(['target', 'measured', 'verdict'], [
      [`first GET /context of a ${int(OPEN_ENTRIES)}-entry session from PostgreSQL ≤ 1 s`, `${fmt(pgOpen, 0)} ms (disk: ${fmt(median(open.disk.map((x) => x.firstMs)), 0)} ms)`, verdict(pgOpen <= 1000)],
    ]),
  ].join('\n')
}

/** Only the first opens, on a fresh database, without the append loads: printed, RESULTS.md untouched. */
async function measureOpenOnly (rounds: number): Promise<string> {
  return await withDatabase(async (url) => {
    const setup = createPool(url, { max: 1 })
    await migrate(setup)
    await setup.end()
    return openTables(await openLoads(url, rounds))
  })
}

if (import.meta.url === `file://${process.argv[1]}` && process.env.PG_SERVER_ONLY === 'open') {
  buildOnce()
  console.log(await measureOpenOnly(Number(process.env.ROUNDS ?? 3)))
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const options = { rounds: Number(process.env.ROUNDS ?? 3), durationS: 5, warmupS: 2 }
  buildOnce()
  const section = pgServerSection(await measurePgServer(options), options)
  // Run alone, it replaces its own section of RESULTS.md (dated in it), as the soak does.
  if (process.env.PG_SERVER_WRITE !== '0') writeSection(join(import.meta.dirname, 'RESULTS.md'), HEADING, section)
  console.log(section)
}
