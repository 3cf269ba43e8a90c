/**
 * Full-text search, on disk (SQLite FTS5 beside the listing index) and on PostgreSQL (tsvector,
 * GIN), over one corpus (lib/search-corpus.ts: 1,000,000 entries in 10,000 sessions by default):
 * - index build: the store's `reindex` from the stored sessions, entries per second;
 * - search latency: 20 queries from every entry to none, each run 5 times after one warm-up,
 *   through the store (`search`, 20 hits with snippets), p50 and p99 over all runs;
 * - index size on disk against the data (the session files; the `ss_lines` and `ss_sessions`
 *   tables);
 * - durable append throughput with indexing on and off in the same run: two servers as shipped
 *   (`SEARCH_INDEX=1` and `=0`; on PostgreSQL the off database also has the queue's triggers
 *   disabled), 100 sessions × 1 connection, ~1 KB messages of words, rounds interleaved.
 * Run alone: npx tsx bench/search.ts (SEARCH_BENCH_SESSIONS=1000 for a smaller corpus).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { parseQuery } from '../src/search/query.js'
import { encodeCwd, sessionFileName } from '../src/session/cwd.js'
import { FileSessionStorage } from '../src/storage/index.js'
import { JsonlStore } from '../src/storage/jsonl/jsonl-store.js'
import { openStore } from '../src/storage/open-store.js'
import type { SessionStore } from '../src/storage/store.js'
import { runCannon } from './lib/cannon.js'
import { createDurableSession } from './lib/http.js'
import { withDatabase } from './lib/pg-database.js'
import { buildOnce, startOurServer, type ServerHandle } from './lib/processes.js'
import { Corpus, prng, queries, VOCABULARY } from './lib/search-corpus.js'
import { fmt, int, median, mib, percentileSorted, table, verdict, writeSection } from './lib/stats.js'

export interface SearchBenchOptions { sessions: number, entriesPerSession: number, rounds: number, durationS: number }
interface QueryTiming { q: string, what: string, hits: number, medianMs: number }
export interface BackendResult {
  name: string
  entries: number
  buildS: number
  p50: number
  p99: number
  perQuery: QueryTiming[]
  indexBytes: number
  dataBytes: number
  appendOn: number
  appendOff: number
}

const HEADING = '## Full-text search'
const CONNECTIONS = 100

/** A ~1 KB user message of vocabulary words. */
function wordsBody (): string {
  const random = prng(42)
  const words: string[] = []
  while (words.join(' ').length < 950) words.push(VOCABULARY[Math.floor(random() * 5000)] as string)
  return JSON.stringify({ type: 'message', message: { role: 'user', content: [{ type: 'text', text: words.join(' ') }] } })
}

async function timeQueries (store: SessionStore): Promise<{ p50: number, p99: number, perQuery: QueryTiming[] }> {
  const all: number[] = []
  const perQuery: QueryTiming[] = []
  for (const { q, what } of queries()) {
    const query = { terms: parseQuery(q), thinking: false, offset: 0, limit: 20 }
    const hits = (await store.search('default', query)).hits.length
    const times: number[] = []
    for (let i = 0; i < 5; i++) {
      const start = performance.now()
      await store.search('default', query)
      times.push(performance.now() - start)
    }
    all.push(...times)
    perQuery.push({ q, what, hits, medianMs: median(times) })
  }
  all.sort((a, b) => a - b)
  return { p50: percentileSorted(all, 50), p99: percentileSorted(all, 99), perQuery }
}

/** Appends per second of the on and off servers (each on a DATA_DIR of its own), medians over interleaved rounds. */
async function appendRatio (start: (on: boolean, dataDir: string) => Promise<ServerHandle>, o: SearchBenchOptions): Promise<{ on: number, off: number }> {
  const dirs = [mkdtempSync(join(tmpdir(), 'ss-bench-append-on-')), mkdtempSync(join(tmpdir(), 'ss-bench-append-off-'))]
  const servers = { on: await start(true, dirs[0] as string), off: await start(false, dirs[1] as string) }
  try {
    const paths: Record<'on' | 'off', string[]> = { on: [], off: [] }
    for (const key of ['on', 'off'] as const) {
      for (let i = 0; i < CONNECTIONS; i++) paths[key].push(`/v1/sessions/${await createDurableSession(servers[key].baseUrl, `/bench/${i % 10}`)}/entries`)
    }
    const rps: Record<'on' | 'off', number[]> = { on: [], off: [] }
    const body = wordsBody()
    for (let round = 0; round < o.rounds; round++) {
      for (const key of (round % 2 === 0 ? ['on', 'off'] : ['off', 'on']) as Array<'on' | 'off'>) {
        const s = await runCannon({ url: servers[key].baseUrl, connections: CONNECTIONS, durationS: o.durationS, method: 'POST', headers: { 'content-type': 'application/json' }, body, paths: paths[key] })
        if (s.non2xx > 0 || s.errors > 0) throw new Error(`append load ${key}: ${s.non2xx} non-2xx, ${s.errors} errors`)
        rps[key].push(s.rps)
      }
    }
    return { on: median(rps.on), off: median(rps.off) }
  } finally {
    await servers.on.stop()
    await servers.off.stop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
}

function dirBytes (path: string, files: string[]): number {
  return files.reduce((n, f) => { try { return n + statSync(join(path, f)).size } catch { return n } }, 0)
}

async function measureDisk (corpus: Corpus, o: SearchBenchOptions): Promise<BackendResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ss-bench-search-'))
  try {
    let dataBytes = 0
    for (let i = 0; i < o.sessions; i++) {
      const s = corpus.session(i)
      const d = join(dir, 'sessions', encodeCwd(s.cwd))
      mkdirSync(d, { recursive: true })
      writeFileSync(join(d, sessionFileName(s.created, s.id)), s.text)
      dataBytes += Buffer.byteLength(s.text)
    }
    // The search index is a database file of its own (search.sqlite), beside the listing's.
    const indexFiles = ['search.sqlite', 'search.sqlite-wal']
    const store = JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })
    await store.ready()
    const started = performance.now()
    await store.reindex(() => {})
    const buildS = (performance.now() - started) / 1000
    const timing = await timeQueries(store)
    await store.close()
    const indexBytes = dirBytes(join(dir, '.session-store'), indexFiles)
    const appends = await appendRatio(async (on, data) => await startOurServer(data, { SEARCH_INDEX: on ? '1' : '0' }), o)
    return { name: 'disk (SQLite FTS5)', entries: corpus.total, buildS, ...timing, indexBytes, dataBytes, appendOn: appends.on, appendOff: appends.off }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Stores the corpus in the database by rows, the search queue's trigger off (reindex queues it all). */
export async function seedPg (url: string, corpus: Corpus, o: SearchBenchOptions): Promise<void> {
  const opened = await openStore({ storage: 'postgres', dataDir: '/bench', databaseUrl: url, searchIndex: false })
  await opened.close()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('ALTER TABLE ss_lines DISABLE TRIGGER ss_lines_search_added; ALTER TABLE ss_sessions DISABLE TRIGGER ss_sessions_search_head')
    for (let i = 0; i < o.sessions; i += 100) {
      const batch = Array.from({ length: Math.min(100, o.sessions - i) }, (_, k) => corpus.session(i + k))
      const info = batch.map((s) => JSON.stringify({ id: s.id, cwd: s.cwd, created: s.created, modifiedMs: Date.parse(s.created), messageCount: s.entries, firstMessage: '', entryCount: s.entries }))
      await client.query(`INSERT INTO ss_sessions (tenant, id, head, lines, saved, version, reset_version, modified, cwd, messages, info, size)
        SELECT 'default', u.id, u.head, u.n, true, nextval('ss_version'), currval('ss_version'), u.m, u.cwd, u.n, u.info, u.size
        FROM unnest($1::text[], $2::text[], $3::int[], $4::float8[], $5::text[], $6::text[], $7::bigint[]) AS u (id, head, n, m, cwd, info, size)`,
      [batch.map((s) => s.id), batch.map((s) => s.text.slice(0, s.text.indexOf('\n') + 1)), batch.map((s) => s.entries), batch.map((s) => Date.parse(s.created)),
        batch.map((s) => JSON.stringify(s.cwd)), info, batch.map((s) => Buffer.byteLength(s.text))])
      const rows = batch.flatMap((s) => s.text.split('\n').slice(1, -1).map((line, k) => [s.id, k + 1, line] as const))
      await client.query('INSERT INTO ss_lines (tenant, session, pos, line) SELECT \'default\', u.s, u.p, u.l FROM unnest($1::text[], $2::int[], $3::text[]) AS u (s, p, l)',
        [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])])
    }
    await client.query('ALTER TABLE ss_lines ENABLE TRIGGER ss_lines_search_added; ALTER TABLE ss_sessions ENABLE TRIGGER ss_sessions_search_head')
    await client.query('VACUUM ANALYZE')
  } finally {
    await client.end()
  }
}

async function sizeOf (url: string, sql: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const result = await client.query<{ n: string }>(sql) as pg.QueryResult<{ n: string }> | Array<pg.QueryResult<{ n: string }>>
    return Number((Array.isArray(result) ? result.at(-1) : result)?.rows[0]?.n)
  } finally {
    await client.end()
  }
}

async function measurePg (corpus: Corpus, o: SearchBenchOptions): Promise<BackendResult> {
  return await withDatabase(async (url) => {
    await seedPg(url, corpus, o)
    const opened = await openStore({ storage: 'postgres', dataDir: '/bench', databaseUrl: url })
    let buildS: number
    let timing
    try {
      const started = performance.now()
      await opened.store.reindex(() => {})
      buildS = (performance.now() - started) / 1000
      await sizeOf(url, 'VACUUM ANALYZE ss_search')
      timing = await timeQueries(opened.store)
    } finally {
      await opened.close()
    }
    const indexBytes = await sizeOf(url, "SELECT pg_total_relation_size('ss_search') AS n")
    const dataBytes = await sizeOf(url, "SELECT pg_total_relation_size('ss_lines') + pg_total_relation_size('ss_sessions') AS n")
    const appends = await withDatabase(async (onUrl) => await withDatabase(async (offUrl) => {
      const offStore = await openStore({ storage: 'postgres', dataDir: '/bench', databaseUrl: offUrl, searchIndex: false })
      await offStore.close()
      await sizeOf(offUrl, 'ALTER TABLE ss_lines DISABLE TRIGGER ss_lines_search_added; ALTER TABLE ss_sessions DISABLE TRIGGER ss_sessions_search_head; SELECT 0 AS n')
      return await appendRatio(async (on, data) => await startOurServer(data, { STORAGE: 'postgres', DATABASE_URL: on ? onUrl : offUrl, SEARCH_INDEX: on ? '1' : '0' }), o)
    }))
    return { name: 'PostgreSQL (tsvector, GIN)', entries: corpus.total, buildS, ...timing, indexBytes, dataBytes, appendOn: appends.on, appendOff: appends.off }
  })
}

export async function measureSearch (o: SearchBenchOptions): Promise<BackendResult[]> {
  const corpus = new Corpus({ sessions: o.sessions, entriesPerSession: o.entriesPerSession, seed: 7 })
  return [await measureDisk(corpus, o), await measurePg(corpus, o)]
}

export function searchSection (results: BackendResult[], o: SearchBenchOptions): string {
  const rows = results.map((r) => {
    const rate = r.entries / r.buildS
    const ratio = r.appendOn / r.appendOff
    return [r.name, `${fmt(r.p50, 1)} / ${fmt(r.p99, 1)} ms ${verdict(r.p99 <= 100)}`, `${int(rate)}/s (${fmt(r.buildS, 1)} s) ${verdict(rate >= 20_000)}`,
      `${int(r.appendOn)} ÷ ${int(r.appendOff)} = ${fmt(ratio, 2)} ${verdict(ratio >= 0.9)}`, `${mib(r.indexBytes)} ÷ ${mib(r.dataBytes)} = ${fmt(r.indexBytes / r.dataBytes, 2)}`]
  })
  const per = results[0]?.perQuery.map((q, i) => [`\`${q.q}\``, q.what, String(q.hits), ...results.map((r) => fmt(r.perQuery[i]?.medianMs ?? NaN, 1))]) ?? []
  return `${HEADING}

${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, \`npx tsx bench/search.ts\`: ${int(o.sessions * o.entriesPerSession)} entries in ${int(o.sessions)} sessions
(lib/search-corpus.ts: user questions, assistant answers with a tool call, tool results; ~60 words per entry over a Zipf
vocabulary of 30,000 words, with words planted in known numbers of entries). Search: 20 queries × 5 runs through the
store, 20 hits each with snippets. Build: the store's \`reindex\` (files or rows read, parsed and indexed). Appends: servers
as shipped with \`SEARCH_INDEX=1\` and \`=0\`, ${CONNECTIONS} sessions × 1 connection, ~1 KB messages of words, ${o.rounds} interleaved
rounds of ${o.durationS} s, medians.

${table(['store', 'search p50 / p99 (target p99 ≤ 100 ms)', 'index build (target ≥ 20,000 entries/s)', 'appends/s on ÷ off (target ≥ 0.9)', 'index ÷ data on disk'], rows)}

Median per query, ms:

${table(['query', 'what', 'hits', ...results.map((r) => r.name)], per)}
`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sessions = Number(process.env.SEARCH_BENCH_SESSIONS ?? 10_000)
  const o = { sessions, entriesPerSession: 100, rounds: 5, durationS: 5 }
  buildOnce()
  const section = searchSection(await measureSearch(o), o)
  console.log(section)
  if (sessions === 10_000) writeSection(join(import.meta.dirname, 'RESULTS.md'), HEADING, section)
}
