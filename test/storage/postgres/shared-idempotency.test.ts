/**
 * Two server processes on one database (STORAGE=postgres) given one Idempotency-Key at the same
 * moment: the key is claimed in the database before the append, so exactly one of the two
 * attempts appends and the other answers the first answer again (`Idempotent-Replayed: true`).
 * Another body with the key is refused at once, even while the first attempt is in flight; a
 * failed attempt frees its key; a claim left by a server killed while it appended is taken over
 * once it has gone stale; the answer is kept in the transaction that stores the entries, so a
 * server killed before it could keep it leaves them unstored, never stored without an answer.
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

/**
 * A lock held by a connection of the test, so that statements that need it wait in the
 * database until `release`: a session's row (its appends wait) or the writes to a table.
 */
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

  /** The database connections waiting for this one (for a lock it holds). */
  async blocked (): Promise<number[]> {
    const { rows } = await this.client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))')
    return rows.map((r) => r.pid)
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

  it('appends once when both attempts are in before either writes its key', async () => {
    const ids = await sessionsOnBoth('/work/idem-held')
    for (let round = 0; round < 2; round++) {
      // Writes of keys wait until both attempts of every pair write theirs.
      const lock = await HeldLock.take(servers.db.url, 'LOCK TABLE ss_idempotency_keys IN SHARE MODE')
      try {
        const pairs = sendPairs(ids, round)
        await lock.waitForWaiters(2 * ids.length, 'ss_idempotency_keys')
        await lock.release()
        for (const pair of await pairs) expectOneApplied(pair)
      } finally {
        await lock.end()
      }
    }
    for (const id of ids) expect(await contents(servers.b.baseUrl, id)).toEqual(appended(2))
  })

  it('the same key with another body is 422 on the other server while the first attempt is in flight', async () => {
    const id = await savedSession(servers.a.baseUrl, '/work/idem-other')
    const lock = await lockRow(servers.db.url, id)
    try {
      const headers = { 'idempotency-key': 'other-1' }
      const first = call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('first')), headers)
      await lock.waitForWaiters(1)
      const other = call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('second')), headers)
      // Answered while the first attempt still waits (it would be 422 after it, too).
      const waiting = new Promise<undefined>((resolve) => setTimeout(resolve, 10_000))
      const answered = await Promise.race([other, waiting])
      await lock.release()
      expect(answered?.status).toBe(422)
      expect((await first).status).toBe(201)
    } finally {
      await lock.end()
    }
    expect(await contents(servers.b.baseUrl, id)).toEqual(['q', [{ type: 'text', text: 'a' }], 'first'])
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

  it('a server killed while it kept its answer leaves the entries unstored: a retry applies them once', async () => {
    const id = await savedSession(servers.a.baseUrl, '/work/idem-kept')
    const c = await servers.start()
    const body = message(user('kept once'))
    const headers = { 'idempotency-key': 'kept-1' }
    // C claims the key, then its append waits for the session's row.
    const row = await lockRow(servers.db.url, id)
    let key: HeldLock | undefined
    try {
      void call(c.baseUrl, 'POST', `/v1/sessions/${id}/entries`, body, headers).catch(() => {})
      await row.waitForWaiters(1)
      // Now the claim's row is locked too, and the append goes on until it has to write the answer there.
      key = await HeldLock.take(servers.db.url, "SELECT 1 FROM ss_idempotency_keys WHERE key = 'kept-1' FOR UPDATE")
      await row.release()
      for (let tries = 0; (await key.blocked()).length === 0; tries++) {
        if (tries > 400) throw new Error('the append never came to write its answer')
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      c.child.kill('SIGKILL')
      await c.exited
      for (const pid of await key.blocked()) await key.client.query('SELECT pg_terminate_backend($1)', [pid])
      await key.release()
      await key.client.query("UPDATE ss_idempotency_keys SET claimed_at = claimed_at - interval '1 hour' WHERE key = 'kept-1'")
      const retry = await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, body, headers)
      expect(retry.status).toBe(201)
      expect(await contents(servers.a.baseUrl, id)).toEqual(['q', [{ type: 'text', text: 'a' }], 'kept once'])
      const again = await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, body, headers)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(JSON.stringify(again.body)).toBe(JSON.stringify(retry.body))
    } finally {
      await row.end()
      await key?.end()
      if (c.child.exitCode === null && c.child.signalCode === null) { c.child.kill('SIGKILL'); await c.exited }
    }
  })

  it('a key claimed by a server killed while it appended is applied once by a retry', async () => {
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
      const claims = async (): Promise<unknown[]> => (await lock.client.query(
        "SELECT response FROM ss_idempotency_keys WHERE key = 'killed-1'")).rows.map((r) => r.response)
      expect(await claims()).toEqual([null])
      // A retry waits while the claim is fresh, and appends once it has gone stale (aged here
      // rather than waited for).
      let answered = false
      const retrying = call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, body, headers).finally(() => { answered = true })
      await new Promise((resolve) => setTimeout(resolve, 1000))
      expect(answered).toBe(false)
      await lock.client.query("UPDATE ss_idempotency_keys SET claimed_at = claimed_at - interval '1 hour' WHERE key = 'killed-1'")
      const retry = await retrying
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
