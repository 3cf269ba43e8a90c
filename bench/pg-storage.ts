/**
 * The PostgreSQL storage layer (src/storage/postgres) against the disk storage layer, in one
 * run, without HTTP: durable appends (1 session × 100 concurrent writers, 100 sessions × 1),
 * delivery from an append on instance A to 100 followers on instance B at 200 appends/s, and
 * reading a 100k-entry session back from the database. Instances A and B are separate pools,
 * session logs and notifiers in this one process. Target: 127.0.0.1 only (`BENCH_DATABASE_URL`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileSessionStorage } from '../src/storage/file-session-storage.js'
import type { SessionStorage, SessionStorageWriter } from '../src/storage/types.js'
import { LiveReader } from '../src/storage/postgres/follower.js'
import { migrate } from '../src/storage/postgres/migrate.js'
import { PgNotifier } from '../src/storage/postgres/notifier.js'
import { PgSessionStorage } from '../src/storage/postgres/pg-session-storage.js'
import { createPool } from '../src/storage/postgres/pool.js'
import { PgSessionLog } from '../src/storage/postgres/session-log.js'
import { TEXT_PAGE_ROWS } from '../src/storage/postgres/session-text.js'
import { withDatabase } from './lib/pg-database.js'
import { fmt, int, median, percentileSorted, sleep, table } from './lib/stats.js'

const LINE = (id: string): string => JSON.stringify({ type: 'message', id, parentId: null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: [{ type: 'text', text: 'x'.repeat(900) }] } })
const HEADER = (id: string): string => JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/bench' })

export interface PgStorageResults {
  appends: Array<{ load: string, disk: number[], pg: number[] }>
  delivery: { samples: number, p50: number, p99: number, max: number, sent: number, expected: number }
  open100k: { exportMs: number[], pagedMs: number[] }
}

/**
 * Appends through a storage as the server makes them: one writer per session file (created
 * with its header first) and the group commit of the session layer (all lines pending when a
 * batch starts go out in one write, then one sync), so both storages acknowledge only durable
 * appends. The disk storage writes and fdatasyncs the file; the PostgreSQL storage commits
 * the batch (its writers' batches of every session waiting at that moment share a statement).
 */
class LayerLog {
  readonly #writers = new Map<string, { w: SessionStorageWriter, pending: Array<{ line: string, done: () => void, fail: (e: unknown) => void }>, busy: boolean }>()
  constructor (readonly storage: SessionStorage, readonly dir: string) {}

  #path (session: string): string {
    return join(this.dir, 'sessions', '--bench--', `${session}.jsonl`)
  }

  async create (session: string): Promise<void> {
    this.storage.ensureDirSync(join(this.dir, 'sessions', '--bench--'))
    await this.storage.writeText(this.#path(session), `${HEADER(session)}\n`)
  }

  async append (session: string, line: string): Promise<void> {
    let s = this.#writers.get(session)
    if (s === undefined) this.#writers.set(session, s = { w: this.storage.openWriter(this.#path(session), { flags: 'a' }), pending: [], busy: false })
    const slot = s
    await new Promise<void>((resolve, reject) => {
      slot.pending.push({ line, done: resolve, fail: reject })
      if (!slot.busy) void this.#drain(slot)
    })
  }

  async #drain (s: { w: SessionStorageWriter, pending: Array<{ line: string, done: () => void, fail: (e: unknown) => void }>, busy: boolean }): Promise<void> {
    s.busy = true
    while (s.pending.length > 0) {
      const batch = s.pending.splice(0)
      try {
        await s.w.writeLine(batch.map((p) => p.line + '\n').join(''))
        await s.w.fsync()
        for (const p of batch) p.done()
      } catch (err) {
        for (const p of batch) p.fail(err)
      }
    }
    s.busy = false
  }

  async close (): Promise<void> {
    for (const s of this.#writers.values()) await s.w.close()
  }
}

/** Appends per second with `writers` concurrent loops over `sessions` for `seconds`. */
async function load (append: (session: string, n: number) => Promise<void>, sessions: string[], writers: number, seconds: number): Promise<number> {
  let done = 0
  const end = performance.now() + seconds * 1000
  await Promise.all(Array.from({ length: writers }, async (_, w) => {
    const session = sessions[w % sessions.length] as string
    while (performance.now() < end) await append(session, done++)
  }))
  return done / seconds
}

async function appendLoads (url: string, rounds: number, seconds: number): Promise<PgStorageResults['appends']> {
  const pool = createPool(url, { max: 10 })
  const pgStorage = await PgSessionStorage.open(pool, { dataDir: '/bench-pg-storage' })
  const loads = [
    { load: '1 session × 100 writers', sessions: 1, writers: 100 },
    { load: '100 sessions × 1 writer', sessions: 100, writers: 100 },
  ]
  const out = loads.map((l) => ({ load: l.load, disk: [] as number[], pg: [] as number[] }))
  for (let round = 0; round < rounds; round++) {
    for (const [i, l] of loads.entries()) {
      const ids = Array.from({ length: l.sessions }, (_, s) => `r${round}-l${i}-s${s}`)
      const pgLog = new LayerLog(pgStorage, '/bench-pg-storage')
      for (const id of ids) await pgLog.create(id)
      const pgRate = await load(async (s, n) => { await pgLog.append(s, LINE(`e${n}`)) }, ids, l.writers, seconds)
      await pgLog.close()
      const dir = mkdtempSync(join(tmpdir(), 'ss-bench-disk-'))
      const disk = new LayerLog(new FileSessionStorage(), dir)
      for (const id of ids) await disk.create(id)
      const diskRate = await load(async (s, n) => { await disk.append(s, LINE(`e${n}`)) }, ids, l.writers, seconds)
      await disk.close()
      rmSync(dir, { recursive: true, force: true })
      out[i]!.pg.push(pgRate)
      out[i]!.disk.push(diskRate)
    }
  }
  await pgStorage.close()
  await pool.end()
  return out
}

async function delivery (url: string, subscribers: number, rate: number, seconds: number): Promise<PgStorageResults['delivery']> {
  const poolA = createPool(url, { max: 10 })
  const poolB = createPool(url, { max: 10 })
  const a = new PgSessionLog(poolA)
  const b = new PgSessionLog(poolB)
  const notifierB = new PgNotifier(url, poolB, { tailCheckMs: 1000 })
  await notifierB.start()
  const id = 'fanout'
  await a.create({ tenant: 'bench', id, cwd: '/bench', header: HEADER(id) })
  const sentAt = new Map<string, number>()
  const latencies: number[] = []
  const reader = new LiveReader(b, notifierB)
  const stops = Array.from({ length: subscribers }, () => reader.follow('bench', id, 0, (page) => {
    const now = performance.now()
    for (const e of page) latencies.push(now - (sentAt.get(e.id) ?? now))
  }))
  const total = rate * seconds
  const start = performance.now()
  const inflight: Array<Promise<unknown>> = []
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    const eid = `d${i}`
    sentAt.set(eid, performance.now())
    inflight.push(a.append('bench', id, [{ id: eid, line: LINE(eid) }]))
  }
  await Promise.all(inflight)
  const expected = total * subscribers
  const until = performance.now() + 10_000
  while (latencies.length < expected && performance.now() < until) await sleep(20)
  for (const stop of stops) stop()
  await notifierB.close()
  await poolA.end()
  await poolB.end()
  const sorted = latencies.sort((x, y) => x - y)
  return { samples: sorted.length, p50: percentileSorted(sorted, 50), p99: percentileSorted(sorted, 99), max: sorted[sorted.length - 1] ?? Number.NaN, sent: total, expected }
}

async function open100k (url: string, runs: number): Promise<PgStorageResults['open100k']> {
  const pool = createPool(url, { max: 4 })
  const log = new PgSessionLog(pool)
  const id = 'big'
  await log.create({ tenant: 'bench', id, cwd: '/bench', header: HEADER(id) })
  for (let i = 0; i < 100_000; i += 2000) {
    await log.append('bench', id, Array.from({ length: 2000 }, (_, j) => ({ id: `b${i + j}`, line: LINE(`b${i + j}`) })))
  }
  const exportMs: number[] = []
  const pagedMs: number[] = []
  for (let r = 0; r < runs; r++) {
    let start = performance.now()
    const text = await log.exportJsonl('bench', id)
    exportMs.push(performance.now() - start)
    if (text.split('\n').length !== 100_002) throw new Error('export lost lines')
    start = performance.now()
    let n = 0
    for (let after = 0; ;) {
      const page = await log.read('bench', id, after, 10_000)
      n += page.length
      if (page.length < 10_000) break
      after = page[page.length - 1]!.seq
    }
    pagedMs.push(performance.now() - start)
    if (n !== 100_000) throw new Error('paged read lost entries')
  }
  await pool.end()
  return { exportMs, pagedMs }
}

export async function measurePgStorage (rounds: number): Promise<PgStorageResults> {
  return await withDatabase(async (url) => {
    const setup = createPool(url, { max: 1 })
    await migrate(setup)
    await setup.end()
    return {
      appends: await appendLoads(url, rounds, 5),
      delivery: await delivery(url, 100, 200, 10),
      open100k: await open100k(url, rounds),
    }
  })
}

export function pgStorageSection (r: PgStorageResults, rounds: number): string {
  const d = r.delivery
  return [
    '## PostgreSQL storage layer against the disk storage layer',
    '',
    'Appends without HTTP: `PgSessionStorage` (src/storage/postgres, a pool of 10: the batches of every session waiting at',
    'a moment commit in one transaction, `ss_append_files`) against session files written through `FileSessionStorage`,',
    'both driven by the same group commit of the session layer (per session: one write, then one sync, for everything',
    'pending), as the server drives them. Both acknowledge only durable',
    `appends; 982-byte lines; 5 s per load, loads interleaved, ${rounds} rounds, medians. PostgreSQL on 127.0.0.1 with`,
    '`synchronous_commit` on. Instances A and B below are separate pools and notifiers in one process.',
    'These figures show where the time goes below HTTP and carry no verdict: the targets (durable appends at ≥ ×0.5 of disk,',
    'cross-server delivery p99 ≤ 50 ms, a 100,000-entry open ≤ 1 s) are judged on the servers as shipped, over HTTP, in the',
    'two PostgreSQL sections that follow.',
    '',
    table(['load', 'disk appends/s', 'postgres appends/s', 'postgres ÷ disk'], r.appends.map((a) => {
      const ratio = median(a.pg) / median(a.disk)
      return [a.load, `${int(median(a.disk))} (${a.disk.map(int).join(' / ')})`, `${int(median(a.pg))} (${a.pg.map(int).join(' / ')})`, `×${fmt(ratio, 2)}`]
    })),
    '',
    `Delivery across instances: ${int(d.sent)} appends on A at 200/s to one session, 100 followers on B (LISTEN/NOTIFY wake-up,`,
    `one shared re-read from the table per wake-up): ${int(d.samples)} of ${int(d.expected)} deliveries seen; from the append call on A to the entry in a`,
    `follower on B: p50 ${fmt(d.p50)} ms, p99 ${fmt(d.p99)} ms, max ${fmt(d.max)} ms.`,
    '',
    `Reading a 100,000-entry session back from the database: as one export (one snapshot, pages of ${int(TEXT_PAGE_ROWS)} rows) ${r.open100k.exportMs.map((x) => fmt(x, 0)).join(' / ')} ms`,
    `(median ${fmt(median(r.open100k.exportMs), 0)} ms), as entries in pages of 10,000 ${r.open100k.pagedMs.map((x) => fmt(x, 0)).join(' / ')} ms`,
    `(median ${fmt(median(r.open100k.pagedMs), 0)} ms). This is the read only: building the`,
    'session model from those lines is the same work the disk backend does (see the cold-open section).',
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(process.env.ROUNDS ?? 3)
  console.log(pgStorageSection(await measurePgStorage(rounds), rounds))
}
