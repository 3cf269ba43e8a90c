/**
 * Drains the search queue of migration 10 (schema-search.ts): every server takes batches of
 * queued positions (`FOR UPDATE SKIP LOCKED`, so servers share the work), reads the lines and
 * heads they name as they are now, and writes their documents (src/search/extract.ts), all in
 * one transaction: a batch is indexed whole or stays queued. A batch locks its sessions'
 * advisory locks, never their rows, so appends to them go on meanwhile (schema-search-drain.ts).
 * A server drains every `POLL_MS` while its store is open, and a search drains first, so the
 * lag stays well under a second; `ss_search_lag_seconds` and `ss_search_pending` show it,
 * measured from the queue's two ends before every batch.
 */
import type pg from 'pg'
import { addGaugeSource } from '../../metrics/instruments.js'
import { docsOfLine, type SearchDoc } from '../../search/extract.js'
import type { Logger } from '../../session/logger.js'
import type { ReindexProgress } from '../store.js'
import { isUnavailable, query, transaction } from './pool.js'

/** Time between two looks at the queue, ms. */
const POLL_MS = 200
/** Queued positions taken at once. */
const BATCH = 2000
/** Batches a rebuild indexes at a time. */
const REBUILD_LANES = 2
/** Characters of one row's text at most: a longer document takes several rows. */
export const CHUNK_CHARS = 50_000

/** A position to index: a session's line, or its head (`pos` 0). */
interface Position { tenant: string, session: string, pos: number }
interface Taken extends Position { id: string }

/** `text` in pieces of at most `CHUNK_CHARS`, cut at a space near the end where there is one. */
export function chunksOf (text: string): string[] {
  const out: string[] = []
  let at = 0
  while (text.length - at > CHUNK_CHARS) {
    let end = at + CHUNK_CHARS
    const space = text.slice(end - 1000, end).search(/\s(?=\S*$)/)
    if (space >= 0) end = end - 1000 + space + 1
    else if (/[\ud800-\udbff]/.test(text[end - 1] as string)) end--
    out.push(text.slice(at, end))
    at = end
  }
  out.push(text.slice(at))
  return out
}

export class SearchQueue {
  readonly #pool: pg.Pool
  readonly #log: Logger
  #timer: NodeJS.Timeout | undefined
  #running: Promise<number> | undefined
  #closed = false
  /** Positions to take at once: 1 after a batch failed, to find the position that fails. */
  #batch = BATCH
  #pending = 0
  #lag = 0
  readonly #gauges: Array<() => void>

  constructor (pool: pg.Pool, log: Logger) {
    this.#pool = pool
    this.#log = log
    this.#gauges = [
      addGaugeSource('ss_search_pending', () => this.#pending),
      addGaugeSource('ss_search_lag_seconds', () => this.#lag),
    ]
  }

  /** Starts draining every `POLL_MS`. */
  start (): void {
    const tick = async (): Promise<void> => {
      try {
        // Measured before every batch, so that the gauges follow a long catch-up.
        while (!this.#closed) {
          await this.#measure()
          if (await this.drain() === 0) break
        }
      } catch (err) {
        if (!isUnavailable(err)) this.#log.error({ err }, 'Draining the search queue failed')
      }
      if (!this.#closed) this.#timer = setTimeout(() => { void tick() }, POLL_MS)
    }
    this.#timer = setTimeout(() => { void tick() }, 0)
  }

  /** Indexes one batch of what waits (after the batch this server is indexing now); resolves with the positions taken. */
  async drain (): Promise<number> {
    while (this.#running !== undefined) await this.#running.catch(() => 0)
    const run = this.#drainBatch()
    this.#running = run
    try {
      return await run
    } finally {
      this.#running = undefined
    }
  }

  /**
   * Indexes every stored line and head anew, `progress` told as batches are written: the documents
   * are emptied, then `lanes` batches at a time (the server parses one while the database indexes
   * another) walk the lines and then the heads by key (filling the queue with every position and
   * taking each batch off it took a fifth of the time). What is appended meanwhile is queued as ever,
   * and a position found by both is written once (index). A batch that fails is queued, for the drain
   * to find the position that fails. A rebuild stopped midway leaves out what it had not reached.
   */
  async rebuild (progress: ReindexProgress, lanes = REBUILD_LANES): Promise<void> {
    while (this.#running !== undefined) await this.#running.catch(() => 0)
    const run = (async () => {
      const total = await transaction(this.#pool, async (client) => {
        await client.query('TRUNCATE ss_search, ss_search_queue')
        return Number((await client.query<{ n: string }>('SELECT (SELECT count(*) FROM ss_sessions) + (SELECT count(*) FROM ss_lines) AS n')).rows[0]?.n)
      })
      let done = 0
      progress(done, total)
      const walks = [
        new KeyWalk(this.#pool, 'SELECT tenant, session, pos FROM ss_lines', 'tenant, session, pos', (p) => [p.tenant, p.session, p.pos]),
        new KeyWalk(this.#pool, 'SELECT tenant, id AS session, 0 AS pos FROM ss_sessions', 'tenant, id', (p) => [p.tenant, p.session]),
      ]
      const lane = async (): Promise<void> => {
        for (const walk of walks) {
          for (let batch = await walk.next(BATCH); batch.length > 0 && !this.#closed; batch = await walk.next(BATCH)) {
            await transaction(this.#pool, async (client) => { await index(client, batch) }).catch(async (err: unknown) => {
              if (isUnavailable(err)) throw err
              await query(this.#pool, 'INSERT INTO ss_search_queue (tenant, session, pos) SELECT * FROM unnest($1::text[], $2::text[], $3::int[])',
                [batch.map((p) => p.tenant), batch.map((p) => p.session), batch.map((p) => p.pos)])
            })
            progress(done = Math.min(total, done + batch.length), total)
          }
        }
      }
      await Promise.all(Array.from({ length: lanes }, lane))
      return 0
    })()
    this.#running = run
    try {
      await run
    } finally {
      this.#running = undefined
    }
  }

  async close (): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    await this.#running?.catch(() => 0)
    for (const stop of this.#gauges) stop()
  }

  /**
   * Reads the queue's two ends by its key, two index probes however long it is: what waits is
   * the positions between them (an upper bound: a rolled-back append leaves a gap), and the lag
   * the age of the oldest.
   */
  async #measure (): Promise<void> {
    const { rows } = await query<{ n: string, oldest: number }>(this.#pool, `SELECT (SELECT max(id) FROM ss_search_queue) - f.id + 1 AS n,
      extract(epoch FROM clock_timestamp() - f.queued_at)::float8 AS oldest FROM (SELECT id, queued_at FROM ss_search_queue ORDER BY id LIMIT 1) f`)
    this.#pending = Number(rows[0]?.n ?? 0)
    this.#lag = rows[0]?.oldest ?? 0
  }

  async #drainBatch (): Promise<number> {
    let taken: Taken[] = []
    try {
      const n = await transaction(this.#pool, async (client) => {
        taken = (await client.query<Taken>(`DELETE FROM ss_search_queue WHERE id IN
          (SELECT id FROM ss_search_queue ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING id, tenant, session, pos`, [this.#batch])).rows
        if (taken.length > 0) await index(client, taken)
        return taken.length
      })
      if (n === 0) this.#lag = 0
      this.#batch = BATCH
      return n
    } catch (err) {
      if (isUnavailable(err) || taken.length === 0) throw err
      if (this.#batch === 1) {
        // One position that cannot be indexed must not hold up the rest: it is left out.
        this.#log.error({ err, sessionId: taken[0]?.session, pos: taken[0]?.pos }, 'A line could not be indexed for search; it is left out')
        await query(this.#pool, 'DELETE FROM ss_search_queue WHERE id = $1', [taken[0]?.id])
      }
      this.#batch = 1
      return 1
    }
  }
}

/** The keys of a table in batches, in order, one batch at a time whichever lane asks. */
class KeyWalk {
  readonly #pool: pg.Pool
  readonly #select: string
  readonly #key: string
  readonly #keyOf: (p: Position) => unknown[]
  #after: unknown[] | undefined
  #turn: Promise<unknown> = Promise.resolve()

  /** `select` names the positions of the rows; `key` is the columns of its primary key, and `keyOf` their values in a position. */
  constructor (pool: pg.Pool, select: string, key: string, keyOf: (p: Position) => unknown[]) {
    this.#pool = pool
    this.#select = select
    this.#key = key
    this.#keyOf = keyOf
  }

  /** The next `n` positions (none at the end). */
  async next (n: number): Promise<Position[]> {
    const batch = this.#turn.then(async () => {
      const after = this.#after
      const where = after === undefined ? '' : `WHERE (${this.#key}) > (${after.map((_, i) => `$${i + 2}`).join(', ')})`
      const { rows } = await query<Position>(this.#pool, `${this.#select} ${where} ORDER BY ${this.#key} LIMIT $1`, [n, ...(after ?? [])])
      const last = rows.at(-1)
      if (last !== undefined) this.#after = this.#keyOf(last)
      return rows
    })
    this.#turn = batch.catch(() => {})
    return await batch
  }
}

/** Writes the documents of the `taken` positions as the lines and heads are now. */
async function index (client: pg.PoolClient, taken: readonly Position[]): Promise<void> {
  const keys = [...new Map(taken.map((t) => [`${t.tenant}\n${t.session}`, t])).values()]
  const tenants = keys.map((k) => k.tenant)
  const sessions = keys.map((k) => k.session)
  // Servers index one session at a time, so the newer state of a position is written last; a
  // removal of lines or sessions deletes their documents under the same lock (schema-search-drain.ts),
  // so it waits for this batch or this batch sees the lines gone. Session rows are not locked:
  // appends to them go on while the batch is written.
  await client.query(`SELECT pg_advisory_xact_lock(k.key) FROM (SELECT DISTINCT ss_search_lock(u.t, u.s) AS key
    FROM unnest($1::text[], $2::text[]) AS u (t, s)) k ORDER BY k.key`, [tenants, sessions])
  const { rows: heads } = await client.query<{ tenant: string, id: string, head: string }>(`SELECT s.tenant, s.id, s.head FROM ss_sessions s
    JOIN unnest($1::text[], $2::text[]) AS u (t, i) ON s.tenant = u.t AND s.id = u.i`, [tenants, sessions])
  const live = new Map(heads.map((h) => [`${h.tenant}\n${h.id}`, h.head]))
  // A position queued twice (a head changed twice) is written once.
  const wanted = [...new Map(taken.filter((t) => live.has(`${t.tenant}\n${t.session}`)).map((t) => [`${t.tenant}\n${t.session}\n${t.pos}`, t])).values()]
  const { rows: lines } = await client.query<{ tenant: string, session: string, pos: number, line: string }>(`SELECT l.tenant, l.session, l.pos, l.line
    FROM unnest($1::text[], $2::text[], $3::int[]) AS q (t, s, p) JOIN ss_lines l ON l.tenant = q.t AND l.session = q.s AND l.pos = q.p`,
  [wanted.map((t) => t.tenant), wanted.map((t) => t.session), wanted.map((t) => t.pos)])
  const rows = new Rows()
  for (const t of wanted) {
    if (t.pos !== 0) continue
    for (const line of (live.get(`${t.tenant}\n${t.session}`) as string).split('\n')) rows.add(t, docsOfLine(line))
  }
  for (const l of lines) rows.add({ tenant: l.tenant, session: l.session, pos: l.pos }, docsOfLine(l.line))
  // A head changes in place: its documents are written anew. A line never does (a replace deletes it,
  // and its documents with it), so a line indexed before keeps its documents (ON CONFLICT below).
  const changed = wanted.filter((t) => t.pos === 0)
  if (changed.length > 0) {
    await client.query(`DELETE FROM ss_search x USING unnest($1::text[], $2::text[]) AS q (t, s)
      WHERE x.tenant = q.t AND x.session = q.s AND x.pos = 0`, [changed.map((t) => t.tenant), changed.map((t) => t.session)])
  }
  if (rows.body.length === 0) return
  await client.query(`INSERT INTO ss_search (tenant, session, pos, part, chunk, entry_id, type, role, ts, body, tsv)
    SELECT u.t, u.s, u.p, u.pa, u.c, u.e, u.ty, u.r, u.ts, u.b, to_tsvector('ss_search', u.b)
    FROM unnest($1::text[], $2::text[], $3::int[], $4::smallint[], $5::smallint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
      AS u (t, s, p, pa, c, e, ty, r, ts, b)
    ON CONFLICT (tenant, session, pos, part, chunk) DO NOTHING`, rows.columns())
}

/** The rows of documents, column by column. Client text goes in as JSON (NUL and lone surrogates kept). */
class Rows {
  readonly tenant: string[] = []
  readonly session: string[] = []
  readonly pos: number[] = []
  readonly part: number[] = []
  readonly chunk: number[] = []
  readonly entry: Array<string | null> = []
  readonly type: string[] = []
  readonly role: Array<string | null> = []
  readonly ts: string[] = []
  readonly body: string[] = []

  add (at: { tenant: string, session: string, pos: number }, docs: readonly SearchDoc[]): void {
    for (const doc of docs) {
      chunksOf(doc.text).forEach((body, chunk) => {
        this.tenant.push(at.tenant)
        this.session.push(at.session)
        this.pos.push(at.pos)
        this.part.push(doc.part)
        this.chunk.push(chunk)
        this.entry.push(doc.entryId === null ? null : JSON.stringify(doc.entryId))
        this.type.push(JSON.stringify(doc.type))
        this.role.push(doc.role === null ? null : JSON.stringify(doc.role))
        this.ts.push(JSON.stringify(doc.timestamp))
        this.body.push(body)
      })
    }
  }

  columns (): unknown[] {
    return [this.tenant, this.session, this.pos, this.part, this.chunk, this.entry, this.type, this.role, this.ts, this.body]
  }
}
