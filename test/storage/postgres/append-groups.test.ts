/**
 * Group commit across sessions on PostgreSQL: appends to several session files that wait at the
 * same moment share one transaction, numbered per session, and one refused append fails alone.
 */
import pg from 'pg'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { commitBatch } from '../../../src/metrics/instruments.js'
import { PgSessionStorage } from '../../../src/storage/postgres/pg-session-storage.js'
import { pgAvailable, useMigratedDatabase } from '../../helpers/pg.js'
import { header } from './pg-context.js'

const entry = (id: string): string => JSON.stringify({ type: 'message', id, parentId: null, message: { role: 'user', content: id } })

/** Transactions and entries the storage committed so far (`ss_commit_batch_entries{storage="postgres"}`). */
async function commits (): Promise<{ count: number, sum: number }> {
  const { values } = await commitBatch.get()
  const of = (name: string): number => values.find((v) => v.metricName === name && v.labels.storage === 'postgres')?.value ?? 0
  return { count: of('ss_commit_batch_entries_count'), sum: of('ss_commit_batch_entries_sum') }
}

describe.runIf(pgAvailable)('PgSessionStorage group commit across sessions', () => {
  const DATA_DIR = '/pg-append-groups'
  const database = useMigratedDatabase(4)
  let n = 0

  /** `count` session files with a header and one entry each, stored by `s`. */
  async function sessions (s: PgSessionStorage, count: number): Promise<Array<{ id: string, path: string }>> {
    const made = []
    for (let i = 0; i < count; i++) {
      const id = `g${++n}`
      const path = join(DATA_DIR, 'sessions', '--w--', `${id}.jsonl`)
      await s.writeText(path, `${header(id)}\n${entry(`${id}-0`)}\n`)
      made.push({ id, path })
    }
    return made
  }

  const seqs = async (id: string): Promise<Array<{ seq: string, id: string }>> =>
    (await database.pool.query<{ seq: string, id: string }>('SELECT seq, id FROM ss_entries WHERE session = $1 ORDER BY seq', [id])).rows

  it('commits the appends of several sessions waiting at once in one transaction, each numbered after its own entries', async () => {
    const s = await PgSessionStorage.open(database.pool, { dataDir: DATA_DIR })
    const made = await sessions(s, 5)
    const writers = made.map((m) => s.openWriter(m.path, { flags: 'a' }))
    const before = await commits()
    await Promise.all(writers.map(async (w, i) => {
      const id = made[i]?.id as string
      await w.writeLine(`${entry(`${id}-1`)}\n${entry(`${id}-2`)}\n`)
      await w.fsync()
    }))
    const after = await commits()
    expect(after.count - before.count).toBe(1)
    expect(after.sum - before.sum).toBe(10)
    for (const m of made) {
      expect(await seqs(m.id)).toEqual([1, 2, 3].map((seq) => ({ seq: String(seq), id: `${m.id}-${seq - 1}` })))
      expect(await s.readText(m.path)).toBe(`${header(m.id)}\n${entry(`${m.id}-0`)}\n${entry(`${m.id}-1`)}\n${entry(`${m.id}-2`)}\n`)
    }
    await Promise.all(writers.map(async (w) => { await w.close() }))
  })

  it('fails only the stale append of a group: the other sessions of its transaction commit', async () => {
    const a = await PgSessionStorage.open(database.pool, { dataDir: DATA_DIR })
    const [stale, fresh] = await sessions(a, 2) as [{ id: string, path: string }, { id: string, path: string }]
    const b = await PgSessionStorage.open(database.pool, { dataDir: DATA_DIR })
    await a.track(stale.path)
    await a.track(fresh.path)
    await b.track(stale.path)
    const wb = b.openWriter(stale.path, { flags: 'a' })
    await wb.writeLine(`${entry(`${stale.id}-b`)}\n`)
    await wb.close()

    const before = await commits()
    const ws = a.openWriter(stale.path, { flags: 'a' })
    const wf = a.openWriter(fresh.path, { flags: 'a' })
    const [refused, committed] = await Promise.allSettled([ws.writeLine(`${entry(`${stale.id}-a`)}\n`), wf.writeLine(`${entry(`${fresh.id}-a`)}\n`)])
    expect(refused).toMatchObject({ status: 'rejected', reason: { code: 'ESTALE' } })
    expect(committed.status).toBe('fulfilled')
    const after = await commits()
    expect(after.count - before.count).toBe(1)
    expect(after.sum - before.sum).toBe(1)
    expect((await seqs(stale.id)).map((r) => r.id)).toEqual([`${stale.id}-0`, `${stale.id}-b`])
    expect((await seqs(fresh.id)).map((r) => r.id)).toEqual([`${fresh.id}-0`, `${fresh.id}-a`])
    await Promise.all([ws.close().catch(() => {}), wf.close()])
  })

  it('keeps the answers a group carries for its appends that went in, in the same one transaction, and no others', async () => {
    const a = await PgSessionStorage.open(database.pool, { dataDir: DATA_DIR })
    type Made = { id: string, path: string }
    const [stale, fresh, plain] = await sessions(a, 3) as [Made, Made, Made]
    const b = await PgSessionStorage.open(database.pool, { dataDir: DATA_DIR })
    for (const m of [stale, fresh, plain]) await a.track(m.path)
    await b.track(stale.path)
    const wb = b.openWriter(stale.path, { flags: 'a' })
    await wb.writeLine(`${entry(`${stale.id}-b`)}\n`)
    await wb.close()
    const answer = async (key: string): Promise<unknown> =>
      (await database.pool.query('SELECT response #>> \'{}\' AS r FROM ss_idempotency_keys WHERE key = $1', [key])).rows[0]?.r
    const keep = async (m: Made, key: string): Promise<{ committed: boolean }> => {
      expect(await a.replays.claim(m.path, m.id, key, 'h', `o-${key}`)).toEqual({ held: true })
      return a.replays.keepWithLines(m.path, m.id, key, `o-${key}`, { bodyHash: 'h', response: key }, [`${m.id}-a`])
    }
    const staleKeep = await keep(stale, `gk-${stale.id}`)
    const freshKeep = await keep(fresh, `gk-${fresh.id}`)

    const before = await commits()
    const writers = [stale, fresh, plain].map((m) => a.openWriter(m.path, { flags: 'a' }))
    const [refused, ...committed] = await Promise.allSettled(writers.map(async (w, i) => {
      await w.writeLine(`${entry(`${([stale, fresh, plain][i] as Made).id}-a`)}\n`)
    }))
    expect(refused).toMatchObject({ status: 'rejected', reason: { code: 'ESTALE' } })
    expect(committed.map((c) => c.status)).toEqual(['fulfilled', 'fulfilled'])
    const after = await commits()
    expect(after.count - before.count).toBe(1)
    expect(after.sum - before.sum).toBe(2)
    expect([staleKeep.committed, freshKeep.committed]).toEqual([false, true])
    expect(await answer(`gk-${fresh.id}`)).toBe(`"gk-${fresh.id}"`)
    expect(await answer(`gk-${stale.id}`)).toBeNull()
    await Promise.all(writers.map(async (w) => { await w.close().catch(() => {}) }))
  })

  it('an append holding an id its session has, or one id twice, leaves no row of it, and the others of its group commit', async () => {
    const s = await PgSessionStorage.open(database.pool, { dataDir: DATA_DIR })
    const made = await sessions(s, 3)
    const texts = made.map(({ id }, i) => [`${entry(`${id}-0`)}\n`, `${entry(`${id}-x`)}\n${entry(`${id}-x`)}\n`, `${entry(`${id}-1`)}\n`][i] as string)
    const writers = made.map((m) => s.openWriter(m.path, { flags: 'a' }))
    await Promise.all(writers.map(async (w, i) => { await w.writeLine(texts[i] as string); await w.fsync() }))
    for (const [i, m] of made.entries()) expect(await s.readText(m.path)).toBe(`${header(m.id)}\n${entry(`${m.id}-0`)}\n${texts[i] as string}`)
    const [, twice, fine] = made as [{ id: string, path: string }, { id: string, path: string }, { id: string, path: string }]
    expect((await database.pool.query('SELECT 1 FROM ss_entries WHERE session = $1 AND id = $2', [twice.id, `${twice.id}-x`])).rows).toEqual([])
    expect((await seqs(fine.id)).map((r) => r.id)).toEqual([`${fine.id}-0`, `${fine.id}-1`])
    await Promise.all(writers.map(async (w) => { await w.close() }))
  })

  it('ss_append_files refuses an append holding an id its session has and keeps none of its rows', async () => {
    const s = await PgSessionStorage.open(database.pool, { dataDir: DATA_DIR })
    const [taken, fine] = await sessions(s, 2) as [{ id: string, path: string }, { id: string, path: string }]
    const tenants = (await database.pool.query<{ tenant: string }>('SELECT tenant FROM ss_sessions WHERE id = ANY ($1) ORDER BY id', [[taken.id, fine.id]])).rows.map((r) => r.tenant)
    const ids = [`${taken.id}-new`, `${taken.id}-0`, `${fine.id}-1`]
    const { rows } = await database.pool.query<{ status: string }>(
      'SELECT status FROM ss_append_files($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::integer[], $6::integer[], $7::integer[], $8::text[], $9::text[])',
      [tenants, [taken.id, fine.id], [null, null], [new Date(), new Date()], [2, 1], [1, 1, 2], [1, 2, 1], ids, ids.map(entry)])
    expect(rows.map((r) => r.status)).toEqual(['duplicate', 'ok'])
    expect((await seqs(taken.id)).map((r) => r.id)).toEqual([`${taken.id}-0`])
    expect((await seqs(fine.id)).map((r) => r.id)).toEqual([`${fine.id}-0`, `${fine.id}-1`])
  })

  it('an append the database refuses fails alone: the others of its group commit', async () => {
    await database.pool.query(`CREATE FUNCTION refuse_poison () RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id LIKE '%-poison' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`)
    await database.pool.query('CREATE TRIGGER refuse_poison BEFORE INSERT ON ss_entries FOR EACH ROW EXECUTE FUNCTION refuse_poison()')
    try {
      const s = await PgSessionStorage.open(database.pool, { dataDir: DATA_DIR })
      const made = await sessions(s, 3)
      const writers = made.map((m) => s.openWriter(m.path, { flags: 'a' }))
      const outcomes = await Promise.allSettled(writers.map(async (w, i) => {
        await w.writeLine(`${entry(`${made[i]?.id as string}-${i === 1 ? 'poison' : 'ok'}`)}\n`)
      }))
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
      for (const [i, m] of made.entries()) {
        expect((await seqs(m.id)).map((r) => r.id)).toEqual(i === 1 ? [`${m.id}-0`] : [`${m.id}-0`, `${m.id}-ok`])
      }
      await Promise.all(writers.map(async (w) => { await w.close().catch(() => {}) }))
    } finally {
      await database.pool.query('DROP TRIGGER refuse_poison ON ss_entries')
      await database.pool.query('DROP FUNCTION refuse_poison')
    }
  })

  it('does not read again a file whose own commit it hears of before the commit answers', async () => {
    // The database.pool answers the group commit only once the database has announced its change, as
    // happens under load: the server's own notification then waits behind its own append.
    const heard = new pg.Client({ connectionString: database.db.url })
    await heard.connect()
    await heard.query('LISTEN ss_files')
    const announced: string[] = []
    heard.on('notification', (n) => { announced.push(n.payload ?? '') })
    const rereads: string[] = []
    const slowAnswers = new Proxy(database.pool, {
      get (target, prop) {
        if (prop !== 'query') return Reflect.get(target, prop, target) as unknown
        return async (text: string, values?: unknown[]) => {
          if (typeof text === 'string' && text.includes('octet_length')) rereads.push(text)
          const result = await target.query(text, values)
          if (typeof text === 'string' && text.includes('ss_append_files')) {
            const until = Date.now() + 5000
            while (announced.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10))
            await new Promise((resolve) => setTimeout(resolve, 200))
          }
          return result
        }
      },
    })
    const s = await PgSessionStorage.open(slowAnswers, { dataDir: DATA_DIR, listenUrl: database.db.url })
    try {
      const [m] = await sessions(s, 1) as [{ id: string, path: string }]
      announced.length = 0
      rereads.length = 0
      const w = s.openWriter(m.path, { flags: 'a' })
      await w.writeLine(`${entry(`${m.id}-1`)}\n`)
      await w.close()
      await s.readText(m.path) // after any re-read queued on the path
      expect(announced.length).toBeGreaterThan(0)
      expect(rereads).toEqual([])
    } finally {
      await s.close()
      await heard.end()
    }
  })
})
