/**
 * The PostgreSQL store (src/storage/postgres) against the disk store, in one run, without HTTP:
 * durable appends through their journals (1 session × 100 concurrent writers, 100 sessions × 1),
 * delivery from an append on store A to store B (B hears the change and reads what was
 * appended), and reading a 100k-line session back. A and B are separate stores in this one
 * process. Target: 127.0.0.1 only (`BENCH_DATABASE_URL`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileSessionStorage } from '../src/storage/file-session-storage.js'
import { JsonlStore } from '../src/storage/jsonl/jsonl-store.js'
import { openStore } from '../src/storage/open-store.js'
import type { Journal, SessionStore } from '../src/storage/store.js'
import { withDatabase } from './lib/pg-database.js'
import { sessionOf } from './lib/pg-seed.js'
import { fmt, int, median, percentileSorted, sleep, table } from './lib/stats.js'

const LINE = (id: string): string => JSON.stringify({ type: 'message', id, parentId: null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: [{ type: 'text', text: 'x'.repeat(900) }] } })
const HEADER = (id: string): string => JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/bench' })
const TENANT = 'bench'

export interface PgStorageResults {
  appends: Array<{ load: string, disk: number[], pg: number[] }>
  delivery: { samples: number, p50: number, p99: number, max: number, sent: number }
  open100k: { loadMs: number[] }
}

/** A saved session of `id` with `lines` lines after its header, stored whole. */
async function created (store: SessionStore, id: string, lines = 0): Promise<Journal> {
  const text = [HEADER(id), ...Array.from({ length: lines }, (_, i) => LINE(`b${i}`))].join('\n') + '\n'
  return await store.create(TENANT, sessionOf(text))
}

/**
 * Appends through a store's journals as the server drives them: per session, everything pending
 * when a batch starts goes out in one append (one write and one sync on disk; one transaction,
 * shared with the other sessions waiting at that moment, in PostgreSQL).
 */
class Appender {
  readonly #pending = new Map<Journal, Array<{ line: string, done: () => void, fail: (e: unknown) => void }>>()
  readonly #busy = new Set<Journal>()

  async append (journal: Journal, line: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const pending = this.#pending.get(journal) ?? []
      this.#pending.set(journal, pending)
      pending.push({ line, done: resolve, fail: reject })
      if (!this.#busy.has(journal)) void this.#drain(journal)
    })
  }

  async #drain (journal: Journal): Promise<void> {
    this.#busy.add(journal)
    const info = sessionOf(HEADER('x') + '\n').info
    for (let batch = this.#pending.get(journal)?.splice(0) ?? []; batch.length > 0; batch = this.#pending.get(journal)?.splice(0) ?? []) {
      try {
        const outcome = await journal.append({ lines: batch.map((p) => ({ id: null, line: p.line })), save: true, info, answers: [] })
        if (!outcome.ok) throw new Error('append refused')
        for (const p of batch) p.done()
      } catch (err) {
        for (const p of batch) p.fail(err)
      }
    }
    this.#busy.delete(journal)
  }
}

/** Appends per second with `writers` concurrent loops over `journals` for `seconds`. */
async function load (journals: Journal[], writers: number, seconds: number): Promise<number> {
  const appender = new Appender()
  let done = 0
  const end = performance.now() + seconds * 1000
  await Promise.all(Array.from({ length: writers }, async (_, w) => {
    const journal = journals[w % journals.length] as Journal
    while (performance.now() < end) await appender.append(journal, LINE(`e${done++}`))
  }))
  return done / seconds
}

async function appendLoads (url: string, rounds: number, seconds: number): Promise<PgStorageResults['appends']> {
  const pg = await openStore({ storage: 'postgres', dataDir: '/', databaseUrl: url })
  const loads = [
    { load: '1 session × 100 writers', sessions: 1, writers: 100 },
    { load: '100 sessions × 1 writer', sessions: 100, writers: 100 },
  ]
  const out = loads.map((l) => ({ load: l.load, disk: [] as number[], pg: [] as number[] }))
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [i, l] of loads.entries()) {
        const ids = Array.from({ length: l.sessions }, (_, s) => `r${round}-l${i}-s${s}`)
        const pgJournals = await Promise.all(ids.map(async (id) => await created(pg.store, id)))
        out[i]!.pg.push(await load(pgJournals, l.writers, seconds))
        const dir = mkdtempSync(join(tmpdir(), 'ss-bench-disk-'))
        const disk = JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })
        const diskJournals = await Promise.all(ids.map(async (id) => await created(disk, id)))
        out[i]!.disk.push(await load(diskJournals, l.writers, seconds))
        await disk.close()
        rmSync(dir, { recursive: true, force: true })
      }
    }
  } finally {
    await pg.close()
  }
  return out
}

/** Appends on A at `rate`/s; B hears each change and reads what was appended (one follower). */
async function delivery (url: string, rate: number, seconds: number): Promise<PgStorageResults['delivery']> {
  const a = await openStore({ storage: 'postgres', dataDir: '/', databaseUrl: url })
  const b = await openStore({ storage: 'postgres', dataDir: '/', databaseUrl: url })
  const latencies: number[] = []
  const sentAt = new Map<string, number>()
  try {
    const writer = await created(a.store, 'fanout')
    const loaded = await b.store.load(TENANT, 'fanout')
    if (loaded === undefined) throw new Error('B does not find the session')
    for await (const chunk of loaded.text) void chunk // read whole
    const reader = loaded.journal
    let reading = Promise.resolve()
    const stop = b.store.follow(() => {
      reading = reading.then(async () => {
        const newer = await reader.refresh()
        const now = performance.now()
        if (newer?.kind === 'appended') for (const line of newer.lines) latencies.push(now - (sentAt.get(line) ?? now))
      })
    })
    const appender = new Appender()
    const total = rate * seconds
    const start = performance.now()
    const inflight: Array<Promise<void>> = []
    for (let i = 0; i < total; i++) {
      const wait = start + (i * 1000) / rate - performance.now()
      if (wait > 0) await sleep(wait)
      const line = LINE(`d${i}`)
      sentAt.set(line, performance.now())
      inflight.push(appender.append(writer, line))
    }
    await Promise.all(inflight)
    const until = performance.now() + 10_000
    while (latencies.length < total && performance.now() < until) await sleep(20)
    stop()
    await reading
    const sorted = latencies.sort((x, y) => x - y)
    return { samples: sorted.length, p50: percentileSorted(sorted, 50), p99: percentileSorted(sorted, 99), max: sorted[sorted.length - 1] ?? Number.NaN, sent: total }
  } finally {
    await a.close()
    await b.close()
  }
}

async function open100k (url: string, runs: number): Promise<PgStorageResults['open100k']> {
  const pg = await openStore({ storage: 'postgres', dataDir: '/', databaseUrl: url })
  const loadMs: number[] = []
  try {
    await (await created(pg.store, 'big', 100_000)).close()
    for (let r = 0; r < runs; r++) {
      const start = performance.now()
      const loaded = await pg.store.load(TENANT, 'big')
      let lines = 0
      for await (const chunk of loaded?.text ?? []) for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', at + 1)) lines++
      loadMs.push(performance.now() - start)
      await loaded?.journal.close()
      if (lines !== 100_001) throw new Error(`the load read ${lines} lines`)
    }
  } finally {
    await pg.close()
  }
  return { loadMs }
}

export async function measurePgStorage (rounds: number): Promise<PgStorageResults> {
  return await withDatabase(async (url) => {
    return {
      appends: await appendLoads(url, rounds, 5),
      delivery: await delivery(url, 200, 10),
      open100k: await open100k(url, rounds),
    }
  })
}

export function pgStorageSection (r: PgStorageResults, rounds: number): string {
  const d = r.delivery
  return [
    '## PostgreSQL store against the disk store',
    '',
    'Appends without HTTP, through the journals of the two stores (src/storage/store.ts): the PostgreSQL store (a pool',
    'of 10: the appends of every session waiting at a moment commit in one transaction, `ss_journal_append`) against the',
    'disk store (one write and one fdatasync per session batch), both driven by the same per-session group commit as the',
    'server drives them. Both acknowledge only durable',
    `appends; 982-byte lines; 5 s per load, ${rounds} rounds, medians. PostgreSQL on 127.0.0.1 with`,
    '`synchronous_commit` on. Stores A and B below are two stores (two pools, two LISTEN connections) in one process.',
    'These figures show where the time goes below HTTP and carry no verdict: the targets (durable appends at ≥ ×0.5 of disk,',
    'cross-server delivery p99 ≤ 50 ms, a 100,000-entry open ≤ 1 s) are judged on the servers as shipped, over HTTP, in the',
    'two PostgreSQL sections that follow.',
    '',
    table(['load', 'disk appends/s', 'postgres appends/s', 'postgres ÷ disk'], r.appends.map((a) => {
      const ratio = median(a.pg) / median(a.disk)
      return [a.load, `${int(median(a.disk))} (${a.disk.map(int).join(' / ')})`, `${int(median(a.pg))} (${a.pg.map(int).join(' / ')})`, `×${fmt(ratio, 2)}`]
    })),
    '',
    `Delivery across stores: ${int(d.sent)} appends on A at 200/s to one session; B hears each change on \`ss_changes\``,
    `and reads what was appended in one statement: ${int(d.samples)} of ${int(d.sent)} lines seen; from the append call on A to`,
    `the line read on B: p50 ${fmt(d.p50)} ms, p99 ${fmt(d.p99)} ms, max ${fmt(d.max)} ms.`,
    '',
    `Loading a 100,000-line session from the database (its text read in one snapshot, pages of 5,000 lines): ${r.open100k.loadMs.map((x) => fmt(x, 0)).join(' / ')} ms`,
    `(median ${fmt(median(r.open100k.loadMs), 0)} ms). This is the read only: building the`,
    'session model from those lines is the same work the disk backend does (see the cold-open section).',
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(process.env.ROUNDS ?? 3)
  console.log(pgStorageSection(await measurePgStorage(rounds), rounds))
}
