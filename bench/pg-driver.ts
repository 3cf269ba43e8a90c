/**
 * Which PostgreSQL driver the postgres backend uses: `pg` (node-postgres) with its pool against
 * `postgres` (postgres.js), on the statements an append makes. Each load runs against a fresh
 * table in a database of its own (created and dropped here), `synchronous_commit` on, so every
 * commit waits for the WAL flush as an acknowledged append does. Target: 127.0.0.1 only
 * (`BENCH_DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`).
 */
import pg from 'pg'
import postgres from 'postgres'
import { withDatabase } from './lib/pg-database.js'
import { fmt, int, median, table } from './lib/stats.js'

const LINE = JSON.stringify({ type: 'message', message: { role: 'user', content: [{ type: 'text', text: 'x'.repeat(900) }] } })
const POOL = 10

export interface DriverLoad { name: string, rows: number, run: (d: Driver) => Promise<void> }
export interface DriverRow { driver: string, load: string, rowsPerS: number[] }

/** The two drivers behind one face: a transaction of statements, and one multi-row insert. */
interface Driver {
  name: string
  /** One transaction holding `seqs.length` single-row inserts (session row locked first). */
  tx: (session: string, seqs: number[]) => Promise<void>
  /** One statement inserting every seq (inside a transaction with the lock). */
  batch: (session: string, seqs: number[]) => Promise<void>
  end: () => Promise<void>
}

const DDL = [
  'CREATE TABLE s (id text PRIMARY KEY, n bigint NOT NULL DEFAULT 0)',
  'CREATE TABLE e (session text NOT NULL, seq bigint NOT NULL, line text NOT NULL, PRIMARY KEY (session, seq))',
]

function pgDriver (url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: POOL })
  return {
    name: 'pg (node-postgres) 8, Pool max 10',
    tx: async (session, seqs) => {
      const c = await pool.connect()
      try {
        await c.query('BEGIN')
        await c.query('SELECT n FROM s WHERE id = $1 FOR UPDATE', [session])
        for (const seq of seqs) await c.query('INSERT INTO e (session, seq, line) VALUES ($1, $2, $3)', [session, seq, LINE])
        await c.query('UPDATE s SET n = n + $2 WHERE id = $1', [session, seqs.length])
        await c.query('COMMIT')
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        c.release()
      }
    },
    batch: async (session, seqs) => {
      const c = await pool.connect()
      try {
        await c.query('BEGIN')
        await c.query('SELECT n FROM s WHERE id = $1 FOR UPDATE', [session])
        await c.query('INSERT INTO e (session, seq, line) SELECT $1, unnest($2::bigint[]), unnest($3::text[])',
          [session, seqs, seqs.map(() => LINE)])
        await c.query('UPDATE s SET n = n + $2 WHERE id = $1', [session, seqs.length])
        await c.query('COMMIT')
      } finally {
        c.release()
      }
    },
    end: async () => { await pool.end() },
  }
}

function postgresDriver (url: string): Driver {
  const sql = postgres(url, { max: POOL, onnotice: () => {} })
  return {
    name: 'postgres (postgres.js) 3, max 10',
    tx: async (session, seqs) => {
      await sql.begin(async (t) => {
        await t`SELECT n FROM s WHERE id = ${session} FOR UPDATE`
        for (const seq of seqs) await t`INSERT INTO e (session, seq, line) VALUES (${session}, ${seq}, ${LINE})`
        await t`UPDATE s SET n = n + ${seqs.length} WHERE id = ${session}`
      })
    },
    batch: async (session, seqs) => {
      await sql.begin(async (t) => {
        await t`SELECT n FROM s WHERE id = ${session} FOR UPDATE`
        await t`INSERT INTO e (session, seq, line) SELECT ${session}, unnest(${seqs}::bigint[]), unnest(${seqs.map(() => LINE)}::text[])`
        await t`UPDATE s SET n = n + ${seqs.length} WHERE id = ${session}`
      })
    },
    end: async () => { await sql.end({ timeout: 5 }) },
  }
}

/** `count` tasks, at most `parallel` at once. */
async function parallelRun (count: number, parallel: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < count) await task(next++)
  }))
}

/** Seq counters per session: every load inserts unique (session, seq) pairs. */
function seqSource (): (session: string, n: number) => number[] {
  const last = new Map<string, number>()
  return (session, n) => {
    const from = last.get(session) ?? 0
    last.set(session, from + n)
    return Array.from({ length: n }, (_, i) => from + i + 1)
  }
}

const SESSIONS = Array.from({ length: 100 }, (_, i) => `s${i}`)

export const LOADS: DriverLoad[] = [
  {
    name: '2,000 transactions of 1 row, one after another, 1 session',
    rows: 2000,
    run: async (d) => {
      const seqs = seqSource()
      for (let i = 0; i < 2000; i++) await d.tx('s0', seqs('s0', 1))
    }
  },
  {
    name: '10,000 transactions of 1 row, 100 sessions, 100 in flight',
    rows: 10_000,
    run: async (d) => {
      const seqs = seqSource()
      await parallelRun(10_000, 100, async (i) => { const s = SESSIONS[i % 100] as string; await d.tx(s, seqs(s, 1)) })
    }
  },
  {
    name: '10,000 rows as 100 transactions of one 100-row insert, 1 session',
    rows: 10_000,
    run: async (d) => {
      const seqs = seqSource()
      for (let i = 0; i < 100; i++) await d.batch('s0', seqs('s0', 100))
    }
  },
]

async function freshTables (url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  await c.query('DROP TABLE IF EXISTS e; DROP TABLE IF EXISTS s')
  for (const ddl of DDL) await c.query(ddl)
  await c.query('INSERT INTO s (id) SELECT unnest($1::text[])', [SESSIONS])
  await c.end()
}

/** Every load with both drivers, interleaved, `rounds` times. */
export async function measureDrivers (rounds: number): Promise<DriverRow[]> {
  return await withDatabase(async (url) => {
    const rows = new Map<string, DriverRow>()
    for (let round = 0; round < rounds; round++) {
      for (const load of LOADS) {
        for (const make of [pgDriver, postgresDriver]) {
          await freshTables(url)
          const d = make(url)
          const start = performance.now()
          await load.run(d)
          const seconds = (performance.now() - start) / 1000
          await d.end()
          const key = `${d.name}|${load.name}`
          const row = rows.get(key) ?? { driver: d.name, load: load.name, rowsPerS: [] }
          row.rowsPerS.push(load.rows / seconds)
          rows.set(key, row)
        }
      }
    }
    return [...rows.values()]
  })
}

export function driverSection (rows: DriverRow[], rounds: number): string {
  return [
    '## PostgreSQL driver choice',
    '',
    'PostgreSQL on 127.0.0.1 (`synchronous_commit` on: every commit waits for its WAL flush), a database created for the run,',
    'fresh tables per load; each transaction locks its session row (`SELECT … FOR UPDATE`), inserts, bumps the row, commits,',
    `as an append does. Rows of ${LINE.length} bytes of JSON. Both drivers with a pool of ${POOL} connections, loads interleaved, ${rounds} rounds, medians.`,
    '',
    table(['load', 'driver', 'rows/s (median)', 'rows/s per round'],
      rows.map((r) => [r.load, r.driver, int(median(r.rowsPerS)), r.rowsPerS.map((x) => int(x)).join(' / ')])),
    '',
    ...LOADS.map((load) => {
      const [a, b] = rows.filter((r) => r.load === load.name)
      return a === undefined || b === undefined ? '' : `- ${load.name}: postgres.js ÷ pg = ×${fmt(median(b.rowsPerS) / median(a.rowsPerS), 2)}`
    }),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(process.env.ROUNDS ?? 3)
  console.log(driverSection(await measureDrivers(rounds), rounds))
}
