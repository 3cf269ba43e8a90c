/**
 * Blob collection at scale: 100,000 blobs, 80,000 of them referenced by 10,000 sessions (8 image
 * refs each) and 20,000 unreferenced and older than the grace period, on disk and on PostgreSQL.
 * A server as shipped is started on them (on disk the second start: its index built) and a
 * collection runs (`POST /v1/blobs/gc`): its time, the server's RSS sampled every 25 ms while it
 * runs (peak, and above the RSS just before), and the p99 of durable appends by 4 clients while it
 * runs against their p99 in the 10 s before it, in the same server. Run alone: npx tsx bench/gc.ts
 */
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { DEFAULT_TENANT } from '../src/auth/tokens.js'
import { encodeCwd, sessionFileName } from '../src/session/cwd.js'
import { createDurableSession, json, messageBody } from './lib/http.js'
import { withDatabase } from './lib/pg-database.js'
import { sessionOf, withPgStore } from './lib/pg-seed.js'
import { memoryOf, startOurServer, type ServerHandle } from './lib/processes.js'
import { fmt, int, mib, percentileSorted, table } from './lib/stats.js'

const SESSIONS = 10_000
const REFS_PER_SESSION = 8
const UNREFERENCED = 20_000
const BLOB_BYTES = 256
const CLIENTS = 4
const BASELINE_S = 10
/** Older than the default grace period (1 hour). */
const OLD_MS = 2 * 3_600_000

export interface GcRun {
  backend: 'disk' | 'postgres'
  report: { scanned: number, referenced: number, keptYoung: number, deleted: number, bytesFreed: number }
  gcMs: number
  rssBefore: number
  rssPeak: number
  baseline: number[]
  during: number[]
}

const blobBytes = (i: number): Buffer => Buffer.from(`bench blob ${i} `.padEnd(BLOB_BYTES, '.'))
const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

/** The session texts: each a header, a user message with its image refs, an assistant reply. */
function * sessionTexts (hashes: readonly string[]): Generator<{ id: string, cwd: string, text: string }> {
  for (let s = 0; s < SESSIONS; s++) {
    const id = `gc-${s.toString().padStart(6, '0')}`
    const cwd = `/bench/gc-${s % 100}`
    const ts = '2026-01-01T00:00:00.000Z'
    const refs = hashes.slice(s * REFS_PER_SESSION, (s + 1) * REFS_PER_SESSION)
    const content = [{ type: 'text', text: 'what do these screenshots show?' }, ...refs.map((h) => ({ type: 'image', data: `blob:sha256:${h}`, mimeType: 'image/png' }))]
    const lines = [
      { type: 'session', version: 3, id, timestamp: ts, cwd },
      { type: 'message', id: 'a0000001', parentId: null, timestamp: ts, message: { role: 'user', content, timestamp: 1 } },
      { type: 'message', id: 'a0000002', parentId: 'a0000001', timestamp: ts, message: { role: 'assistant', content: [{ type: 'text', text: 'a chart' }], provider: 'bench', model: 'bench', usage: { input: 1, output: 1 }, stopReason: 'stop', timestamp: 2 } },
    ]
    yield { id, cwd, text: lines.map((l) => JSON.stringify(l)).join('\n') + '\n' }
  }
}

function writeDisk (dataDir: string, hashes: readonly string[]): void {
  const old = new Date(Date.now() - OLD_MS)
  mkdirSync(join(dataDir, 'blobs'), { recursive: true })
  for (let i = 0; i < hashes.length; i++) {
    const path = join(dataDir, 'blobs', hashes[i] as string)
    writeFileSync(path, blobBytes(i))
    utimesSync(path, old, old)
  }
  for (const { id, cwd, text } of sessionTexts(hashes)) {
    const dir = join(dataDir, 'sessions', encodeCwd(cwd))
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, sessionFileName('2026-01-01T00:00:00.000Z', id)), text)
  }
}

async function seedPg (url: string, hashes: readonly string[]): Promise<void> {
  await withPgStore(url, async (store) => {
    const all = [...sessionTexts(hashes)]
    let next = 0
    const worker = async (): Promise<void> => {
      for (let i = next++; i < all.length; i = next++) await (await store.create(DEFAULT_TENANT, sessionOf((all[i] as { text: string }).text))).close()
    }
    await Promise.all(Array.from({ length: 16 }, worker))
  })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (let i = 0; i < hashes.length; i += 5000) {
      const slice = hashes.slice(i, i + 5000)
      await client.query(`INSERT INTO ss_blobs (tenant, hash, media_type, size, data, touched_at)
        SELECT $1, h, 'application/octet-stream', $2, d, now() - interval '2 hours' FROM unnest($3::text[], $4::bytea[]) AS b (h, d)`,
      [DEFAULT_TENANT, BLOB_BYTES, slice, slice.map((_, k) => blobBytes(i + k))])
    }
  } finally {
    await client.end()
  }
}

/** Appends by `CLIENTS` clients until `running()` is false; each answer's latency in ms. */
async function appendWhile (baseUrl: string, ids: readonly string[], running: () => boolean): Promise<number[]> {
  const latencies: number[] = []
  const body = messageBody(512)
  await Promise.all(ids.map(async (id) => {
    while (running()) {
      const start = performance.now()
      const res = await fetch(`${baseUrl}/v1/sessions/${id}/entries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      await res.text()
      if (res.status !== 201) throw new Error(`append: ${res.status}`)
      latencies.push(performance.now() - start)
    }
  }))
  return latencies
}

async function measure (server: ServerHandle, backend: GcRun['backend']): Promise<GcRun> {
  const ids = await Promise.all(Array.from({ length: CLIENTS }, async (_, i) => await createDurableSession(server.baseUrl, `/bench/appends-${i}`)))
  const until = performance.now() + BASELINE_S * 1000
  const baseline = await appendWhile(server.baseUrl, ids, () => performance.now() < until)
  const pid = server.child.pid
  const rssBefore = memoryOf(pid).rss
  let rssPeak = rssBefore
  let collecting = true
  const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, memoryOf(pid).rss) }, 25)
  const start = performance.now()
  const gc = json<GcRun['report']>(`${server.baseUrl}/v1/blobs/gc`, { method: 'POST', expect: 200 })
    .catch((err: unknown) => { throw new Error(`collection failed: ${String(err)}; server: ${server.child.stderr.slice(-3000)}`) })
    .finally(() => { collecting = false })
  const during = await appendWhile(server.baseUrl, ids, () => collecting)
  const report = await gc
  const gcMs = performance.now() - start
  clearInterval(sampler)
  rssPeak = Math.max(rssPeak, memoryOf(pid).rss)
  process.stderr.write(`gc ${backend}: ${fmt(gcMs, 0)} ms, ${JSON.stringify(report)}\n`)
  return { backend, report, gcMs, rssBefore, rssPeak, baseline, during }
}

export async function measureGc (): Promise<GcRun[]> {
  const hashes = Array.from({ length: SESSIONS * REFS_PER_SESSION + UNREFERENCED }, (_, i) => sha(blobBytes(i)))
  const runs: GcRun[] = []
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-gc-'))
  try {
    writeDisk(dataDir, hashes)
    await (await startOurServer(dataDir, {}, 600_000)).stop() // builds the index
    const disk = await startOurServer(dataDir)
    try {
      runs.push(await measure(disk, 'disk'))
    } finally {
      await disk.stop()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
  await withDatabase(async (url) => {
    await seedPg(url, hashes)
    const emptyDir = mkdtempSync(join(tmpdir(), 'bench-gc-pg-'))
    try {
      const server = await startOurServer(emptyDir, { STORAGE: 'postgres', DATABASE_URL: url }, 600_000)
      try {
        runs.push(await measure(server, 'postgres'))
      } finally {
        await server.stop()
      }
    } finally {
      rmSync(emptyDir, { recursive: true, force: true })
    }
  })
  return runs
}

const p99 = (values: readonly number[]): number => percentileSorted([...values].sort((a, b) => a - b), 99)

/** The section's first line when run on its own: when, and what else the machine was doing. */
export function gcRunLine (start: readonly number[], end: readonly number[]): string {
  const load = (l: readonly number[]): string => l.map((x) => x.toFixed(2)).join(' / ')
  return `Run of its own (\`npx tsx bench/gc.ts\`), ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load average (1/5/15 min) ${load(start)} at the start, ${load(end)} at the end.`
}

export function gcSection (runs: GcRun[], runLine?: string): string {
  const rows = runs.map((r) => [
    r.backend, int(r.report.scanned), int(r.report.referenced), int(r.report.deleted), fmt(r.gcMs / 1000, 2),
    mib(r.rssPeak), mib(r.rssPeak - r.rssBefore),
    `${fmt(p99(r.baseline), 1)} (${int(r.baseline.length)})`, `${fmt(p99(r.during), 1)} (${int(r.during.length)})`,
  ])
  return [
    '## Blob collection: 100,000 blobs in 10,000 sessions',
    '',
    ...(runLine === undefined ? [] : [runLine, '']),
    `${int(SESSIONS)} saved sessions of ${REFS_PER_SESSION} image refs each hold ${int(SESSIONS * REFS_PER_SESSION)} blobs of ${BLOB_BYTES} bytes;`,
    `${int(UNREFERENCED)} more blobs are referenced by nothing and older than the grace period. One server as shipped (on disk the`,
    'second start on the files, its index built) runs one collection (`POST /v1/blobs/gc`); its RSS is sampled every 25 ms',
    `while it runs. ${CLIENTS} clients append 512-byte messages to sessions of their own (durable, one at a time each) for`,
    `${BASELINE_S} s before the collection and all through it: append p99 without and during the collection, same server, same run`,
    '(number of appends in brackets).',
    '',
    table(['backend', 'blobs', 'referenced', 'deleted', 'collection s', 'peak RSS MiB', 'RSS above before MiB', 'append p99 ms before', 'append p99 ms during'], rows),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const start = loadavg()
  const runs = await measureGc()
  console.log(gcSection(runs, gcRunLine(start, loadavg())))
}
