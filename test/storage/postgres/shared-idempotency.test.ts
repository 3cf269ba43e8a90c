/**
 * Two server processes on one database (STORAGE=postgres) given one Idempotency-Key at the same
 * moment: the answer is kept in the transaction that stores the entries, and an append whose key
 * is answered already stores nothing, so exactly one of the two attempts appends and the other
 * answers the first answer again (`Idempotent-Replayed: true`), or 422 for another body. A failed
 * attempt keeps nothing, and neither does a server killed before its append committed.
 */
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { pgAvailable } from '../../helpers/pg.js'
import { assistant, message, user } from '../../http/session-helpers.js'
import { call, type Answer } from './server-calls.js'
import { useTwoServers } from './two-servers.js'

/** Sessions appended to side by side in each round; one key per session per round. */
const SESSIONS = 8
const ROUNDS = 8

async function savedSession (base: string, cwd: string): Promise<string> {
  const created = await call(base, 'POST', '/v1/sessions', { cwd })
  expect(created.status).toBe(201)
  const id = created.body.header.id as string
  expect((await call(base, 'POST', `/v1/sessions/${id}/entries`, { entries: [message(user('q')), message(assistant('a'))] })).status).toBe(201)
  return id
}

async function contents (base: string, id: string): Promise<unknown[]> {
  const res = await call(base, 'GET', `/v1/sessions/${id}/entries?limit=1000`)
  expect(res.status).toBe(200)
  return res.body.entries.map((e: { message?: { content: unknown } }) => e.message?.content)
}

/** One attempt appended, the other is its answer replayed byte for byte (etag included). */
function expectOneApplied (answers: Answer[]): void {
  expect(answers.map((r) => r.status)).toEqual([201, 201])
  expect(answers.map((r) => r.headers['idempotent-replayed']).sort()).toEqual(['true', undefined])
  expect(JSON.stringify(answers[1]?.body)).toBe(JSON.stringify(answers[0]?.body))
  expect(answers[1]?.etag).toBe(answers[0]?.etag)
}

/** A session row's lock held by a connection of the test: its appends wait in the database until `release`. */
class HeldLock {
  readonly client: pg.Client
  private constructor (client: pg.Client) { this.client = client }

  static async take (url: string, statement: string, values: unknown[] = []): Promise<HeldLock> {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query('BEGIN')
    await client.query(statement, values)
    return new HeldLock(client)
  }

  /** The database connections waiting for a lock (on `table`, when given). */
  async waiters (table?: string): Promise<number[]> {
    const { rows } = await this.client.query<{ pid: number }>(
      'SELECT DISTINCT pid FROM pg_locks WHERE NOT granted AND ($1::text IS NULL OR relation = $1::regclass)', [table ?? null])
    return rows.map((r) => r.pid)
  }

  async waitForWaiters (count: number, table?: string): Promise<void> {
    for (let tries = 0; (await this.waiters(table)).length < count; tries++) {
      if (tries > 400) throw new Error(`fewer than ${count} statements came to wait for the lock`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }

  async terminateWaiters (): Promise<void> {
    for (const pid of await this.waiters()) await this.client.query('SELECT pg_terminate_backend($1)', [pid])
  }

  async release (): Promise<void> { await this.client.query('ROLLBACK') }

  async end (): Promise<void> { await this.client.end() }
}

const lockRow = async (url: string, id: string): Promise<HeldLock> =>
  await HeldLock.take(url, 'SELECT 1 FROM ss_sessions WHERE id = $1 FOR UPDATE', [id])

describe.runIf(pgAvailable)('one Idempotency-Key sent to two servers at once', () => {
  const servers = useTwoServers()

  /** Sends round `round`'s key of each session to A and B at once; the answers of each pair. */
  async function sendPairs (ids: string[], round: number): Promise<Answer[][]> {
    return await Promise.all(ids.map(async (id, s) => {
      const path = `/v1/sessions/${id}/entries`
      const headers = { 'idempotency-key': `r${round}-s${s}` }
      const body = message(user(`round ${round}`))
      return await Promise.all([call(servers.a.baseUrl, 'POST', path, body, headers), call(servers.b.baseUrl, 'POST', path, body, headers)])
    }))
  }

  async function sessionsOnBoth (cwd: string): Promise<string[]> {
    const ids: string[] = []
    for (let s = 0; s < SESSIONS; s++) ids.push(await savedSession(servers.a.baseUrl, cwd))
    for (const id of ids) expect((await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)).status).toBe(200)
    return ids
  }

  const appended = (rounds: number): unknown[] =>
    ['q', [{ type: 'text', text: 'a' }], ...Array.from({ length: rounds }, (_, round) => `round ${round}`)]

  it('appends once: one server applies, the other replays its answer', async () => {
    const ids = await sessionsOnBoth('/work/idem')
    for (let round = 0; round < ROUNDS; round++) for (const pair of await sendPairs(ids, round)) expectOneApplied(pair)
    for (const id of ids) expect(await contents(servers.b.baseUrl, id)).toEqual(appended(ROUNDS))
  })

  it('appends once when both attempts wait for the session together', async () => {
    const ids = await sessionsOnBoth('/work/idem-held')
    for (let round = 0; round < 2; round++) {
      // Every append of the round waits for its session's row until all of them are in.
      const locks = await Promise.all(ids.map(async (id) => await lockRow(servers.db.url, id)))
      try {
        const pairs = sendPairs(ids, round)
        // Each server commits its appends in groups of sessions: at least one statement each waits.
        await locks[0]?.waitForWaiters(2)
        await new Promise((resolve) => setTimeout(resolve, 300))
        for (const lock of locks) await lock.release()
        for (const pair of await pairs) expectOneApplied(pair)
      } finally {
        for (const lock of locks) await lock.end()
      }
    }
    for (const id of ids) expect(await contents(servers.b.baseUrl, id)).toEqual(appended(2))
  })

  it('the same key with another body at the same moment: one appends, the other is 422', async () => {
    const id = await savedSession(servers.a.baseUrl, '/work/idem-other')
    const lock = await lockRow(servers.db.url, id)
    let answers: Answer[]
    try {
      const headers = { 'idempotency-key': 'other-1' }
      const both = Promise.all([
        call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('first')), headers),
        call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('second')), headers),
      ])
      await lock.waitForWaiters(2)
      await lock.release()
      answers = await both
    } finally {
      await lock.end()
    }
    expect(answers.map((a) => a.status).sort()).toEqual([201, 422])
    const winner = answers[0]?.status === 201 ? 'first' : 'second'
    expect(await contents(servers.b.baseUrl, id)).toEqual(['q', [{ type: 'text', text: 'a' }], winner])
  })

  it('a failed attempt keeps nothing: a retry with the key through the other server appends', async () => {
    const id = await savedSession(servers.a.baseUrl, '/work/idem-failed')
    const path = `/v1/sessions/${id}/entries`
    const body = message(user('after a failure'))
    const stale = await call(servers.a.baseUrl, 'POST', path, body, { 'idempotency-key': 'failed-1', 'if-match': '"stale"' })
    expect(stale.status).toBe(412)
    const retry = await call(servers.b.baseUrl, 'POST', path, body, { 'idempotency-key': 'failed-1' })
    expect(retry.status).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBeUndefined()
    const again = await call(servers.a.baseUrl, 'POST', path, body, { 'idempotency-key': 'failed-1' })
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(await contents(servers.a.baseUrl, id)).toEqual(['q', [{ type: 'text', text: 'a' }], 'after a failure'])
  })

  it('a server killed while its append waited stored nothing: a retry through another server applies it once', async () => {
    const id = await savedSession(servers.a.baseUrl, '/work/idem-killed')
    const c = await servers.start()
    const lock = await lockRow(servers.db.url, id)
    try {
      const body = message(user('once'))
      const headers = { 'idempotency-key': 'killed-1' }
      void call(c.baseUrl, 'POST', `/v1/sessions/${id}/entries`, body, headers).catch(() => {})
      await lock.waitForWaiters(1)
      c.child.kill('SIGKILL')
      await c.exited
      // Its connection is cut, as a dead host's would be, before its append could go through.
      await lock.terminateWaiters()
      await lock.release()
      const answers = await lock.client.query("SELECT answer FROM ss_answers WHERE key = 'killed-1'")
      expect(answers.rows).toEqual([])
      const retry = await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, body, headers)
      expect(retry.status).toBe(201)
      expect(retry.headers['idempotent-replayed']).toBeUndefined()
      const again = await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, body, headers)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(JSON.stringify(again.body)).toBe(JSON.stringify(retry.body))
      expect(await contents(servers.a.baseUrl, id)).toEqual(['q', [{ type: 'text', text: 'a' }], 'once'])
    } finally {
      await lock.end()
      if (c.child.exitCode === null && c.child.signalCode === null) { c.child.kill('SIGKILL'); await c.exited }
    }
  })
})
