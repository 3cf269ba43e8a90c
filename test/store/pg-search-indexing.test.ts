/**
 * Indexing for search on PostgreSQL against the writes it races (pg-search-queue.ts,
 * schema-search-drain.ts): a batch being written, simulated by a transaction that holds the
 * session's indexing lock and writes a document of it, neither holds up an append to the session
 * nor outlives the session's removal. A rebuild indexes every session, batches side by side. The gauges follow a
 * catch-up batch by batch.
 */
import pg from 'pg'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openStore, type OpenedStore } from '../../src/storage/open-store.js'
import { createTestDatabase, pgAvailable, type TestDatabase } from '../helpers/pg.js'
import { renderMetrics } from '../../src/metrics/instruments.js'
import { parseQuery } from '../../src/search/query.js'
import { header, item, lines, session, userLine } from './contract.js'

/** Opens a transaction that indexes a document of `id` as a batch would, and leaves it open. */
async function batchInProgress (client: pg.Client, id: string): Promise<void> {
  await client.query('BEGIN')
  await client.query("SELECT pg_advisory_xact_lock(ss_search_lock('acme', $1))", [id])
  await client.query(`INSERT INTO ss_search (tenant, session, pos, part, chunk, type, ts, body, tsv)
    VALUES ('acme', $1, 1, 0, 0, '"message"', '""', 'indexed words', to_tsvector('ss_search', 'indexed words'))`, [id])
}

function gauge (text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return Number(line?.split(' ')[1] ?? NaN)
}

const within = async <T>(ms: number, p: Promise<T>): Promise<T | 'timed out'> =>
  await Promise.race([p, new Promise<'timed out'>((resolve) => setTimeout(() => { resolve('timed out') }, ms))])

describe.runIf(pgAvailable)('PostgreSQL search indexing', () => {
  let db: TestDatabase
  let opened: OpenedStore
  let client: pg.Client
  beforeAll(async () => { db = await createTestDatabase() })
  afterAll(async () => { await db?.drop() })
  beforeEach(async () => {
    opened = await openStore({ storage: 'postgres', dataDir: '/pg', databaseUrl: db.url, searchIndex: false })
    client = new pg.Client({ connectionString: db.url })
    await client.connect()
  })
  afterEach(async () => {
    await client.query('ROLLBACK').catch(() => {})
    await client.end()
    await opened.close()
  })

  it('an append does not wait for a batch indexing its session', async () => {
    const journal = await opened.store.create('acme', session('busy', [userLine('u1', 'first')]))
    await batchInProgress(client, 'busy')
    const appended = journal.append({ lines: lines(userLine('u2', 'second', 'u1')), save: true, info: item('busy'), answers: [] })
    expect(await within(3000, appended)).toEqual({ ok: true })
    await client.query('COMMIT')
  })

  it('a session removed while a batch indexes it keeps no documents', async () => {
    const journal = await opened.store.create('acme', session('gone', [userLine('u1', 'first')]))
    await batchInProgress(client, 'gone')
    const removed = journal.remove()
    expect(await within(300, removed)).toBe('timed out')
    await client.query('COMMIT')
    expect(await removed).toEqual({ ok: true })
    const { rows } = await client.query("SELECT count(*)::int AS n FROM ss_search WHERE tenant = 'acme' AND session = 'gone'")
    expect(rows[0]).toEqual({ n: 0 })
  })

  it('lines replaced while a batch indexes them keep no documents', async () => {
    const journal = await opened.store.create('acme', session('redone', [userLine('u1', 'first')]))
    await batchInProgress(client, 'redone')
    const replaced = journal.replace([{ id: null, line: JSON.stringify({ type: 'session', id: 'redone' }) }], item('redone'))
    expect(await within(300, replaced)).toBe('timed out')
    await client.query('COMMIT')
    expect(await replaced).toEqual({ ok: true })
    const { rows } = await client.query("SELECT count(*)::int AS n FROM ss_search WHERE tenant = 'acme' AND session = 'redone'")
    expect(rows[0]).toEqual({ n: 0 })
  })

  it('a rebuild indexes every line of every session, and reports its progress to the total', async () => {
    for (let i = 0; i < 12; i++) {
      const body = [1, 2, 3].map((k) => userLine(`u${k}`, `rebuilt${i} line${k}`, k === 1 ? null : `u${k - 1}`))
      await (await opened.store.create('acme', session(`r${i}`, body))).close()
    }
    await (await opened.store.create('acme', { ...session('titled'), lines: lines(header('titled', { title: 'a titled wombat' })) })).close()
    // More positions than two batches: a rebuild indexes batches side by side, each position once.
    const bulk = Array.from({ length: 5000 }, (_, k) => userLine(`b${k}`, `bulk entry ${k}`, k === 0 ? null : `b${k - 1}`))
    await (await opened.store.create('acme', session('bulk', bulk))).close()
    await client.query('TRUNCATE ss_search, ss_search_queue')
    const seen: Array<[number, number]> = []
    await opened.store.reindex((done, total) => { seen.push([done, total]) })
    const { rows } = await client.query('SELECT (SELECT count(*) FROM ss_sessions) + (SELECT count(*) FROM ss_lines) AS n')
    const total = Number(rows[0].n)
    expect(seen[0]).toEqual([0, total])
    expect(seen.at(-1)).toEqual([total, total])
    const found = async (words: string): Promise<string[]> =>
      (await opened.store.search('acme', { terms: parseQuery(words), thinking: false, offset: 0, limit: 50 })).hits.map((h) => h.sessionId).sort()
    for (let i = 0; i < 12; i++) expect(await found(`rebuilt${i}`)).toEqual([`r${i}`, `r${i}`, `r${i}`])
    expect(await found('line2')).toHaveLength(12)
    const docs = await client.query("SELECT count(*)::int AS n, count(DISTINCT pos)::int AS positions FROM ss_search WHERE tenant = 'acme' AND session = 'bulk'")
    expect(docs.rows[0]).toEqual({ n: 5000, positions: 5000 })
    // The heads too (a title is a document of the head).
    expect(await found('wombat')).toEqual(['titled'])
  })

  it('shows what waits in ss_search_pending and ss_search_lag_seconds batch by batch, down to nothing', async () => {
    const j = await opened.store.create('acme', session('lag'))
    const many = Array.from({ length: 20_000 }, (_, i) => userLine(`e${i}`, `entry number ${i} of a long session`))
    expect(await j.append({ lines: lines(...many), save: true, info: item('lag'), answers: [] })).toEqual({ ok: true })
    const indexing = await openStore({ storage: 'postgres', dataDir: '/pg', databaseUrl: db.url })
    try {
      const seen: number[] = []
      for (let i = 0; i < 6000; i++) {
        const body = (await renderMetrics()).body
        const pending = gauge(body, 'ss_search_pending')
        if (pending !== seen.at(-1)) seen.push(pending)
        if (pending === 0 && seen.length > 1) {
          expect(gauge(body, 'ss_search_lag_seconds')).toBe(0)
          break
        }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      const waiting = seen.filter((n) => n > 0)
      expect(waiting.length).toBeGreaterThan(2)
      expect(waiting).toEqual([...waiting].sort((a, b) => b - a))
      expect(seen.at(-1)).toBe(0)
    } finally {
      await indexing.close()
    }
  })
})
