import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { follow, LiveReader } from '../../../src/storage/postgres/follower.js'
import type { StoredEntry } from '../../../src/storage/postgres/session-log.js'
import { pgAvailable } from '../../helpers/pg.js'
import { PgContext, header, line, sessionId, until, type Instance } from './pg-context.js'

describe.runIf(pgAvailable)('live reads across instances (LISTEN/NOTIFY, tail check)', () => {
  const ctx = new PgContext()
  let a: Instance
  let b: Instance

  beforeAll(async () => {
    await ctx.setUp()
    a = await ctx.instance()
    // A tail check slower than any test here, unless a test makes its own instance.
    b = await ctx.instance({ tailCheckMs: 60_000 })
  })
  afterAll(async () => { await ctx.tearDown() })

  async function created (): Promise<string> {
    const id = sessionId()
    await a.log.create({ tenant: 'default', id, cwd: '/w', header: header(id) })
    return id
  }

  it('delivers appends made on A to a follower on B, in order, each once', async () => {
    const id = await created()
    const seen: StoredEntry[] = []
    const stop = follow(b.log, b.notifier, 'default', id, 0, (page) => { seen.push(...page) })
    for (let i = 1; i <= 30; i++) await a.log.append('default', id, [{ id: `e${i}`, line: line(`e${i}`) }])
    await until(() => seen.length >= 30)
    stop()
    expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
    expect(seen.map((e) => e.line)).toEqual(Array.from({ length: 30 }, (_, i) => line(`e${i + 1}`)))
  })

  it('resumes after a Last-Event-ID on any instance: only later entries, then live ones', async () => {
    const id = await created()
    await a.log.append('default', id, Array.from({ length: 8 }, (_, i) => ({ id: `r${i + 1}`, line: line(`r${i + 1}`) })))
    const seen: number[] = []
    const stop = follow(b.log, b.notifier, 'default', id, 5, (page) => { seen.push(...page.map((e) => e.seq)) })
    await until(() => seen.length >= 3)
    await a.log.append('default', id, [{ id: 'r9', line: line('r9') }])
    await until(() => seen.length >= 4)
    stop()
    expect(seen).toEqual([6, 7, 8, 9])
  })

  it('a lost notification only delays: the tail check finds entries committed without one', async () => {
    const c = await ctx.instance({ tailCheckMs: 200 })
    const id = await created()
    const seen: number[] = []
    const stop = follow(c.log, c.notifier, 'default', id, 0, (page) => { seen.push(...page.map((e) => e.seq)) })
    await new Promise((resolve) => setTimeout(resolve, 100))
    // Committed the way an append commits, minus its NOTIFY.
    await a.pool.query("INSERT INTO ss_entries (tenant, session, seq, id, line) VALUES ('default', $1, 1, 'q1', $2)", [id, line('q1')])
    await a.pool.query("UPDATE ss_sessions SET entry_count = 1, revision = revision + 1 WHERE tenant = 'default' AND id = $1", [id])
    await until(() => seen.length >= 1, 5000)
    stop()
    expect(seen).toEqual([1])
  })

  it('re-establishes a LISTEN connection that was cut and reads what was committed meanwhile', async () => {
    const id = await created()
    const seen: number[] = []
    const stop = follow(b.log, b.notifier, 'default', id, 0, (page) => { seen.push(...page.map((e) => e.seq)) })
    const connections = b.notifier.connections
    await a.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'session-store-listen' AND query ILIKE 'LISTEN%'")
    await a.log.append('default', id, [{ id: 'l1', line: line('l1') }])
    await until(() => b.notifier.connections > connections)
    await a.log.append('default', id, [{ id: 'l2', line: line('l2') }])
    await until(() => seen.length >= 2)
    stop()
    expect(seen).toEqual([1, 2])
  })

  it('serves the followers of one session from shared reads, and lets one far behind catch up on its own', async () => {
    const id = await created()
    await a.log.append('default', id, Array.from({ length: 50 }, (_, i) => ({ id: `h${i + 1}`, line: line(`h${i + 1}`) })))
    const reader = new LiveReader(b.log, b.notifier, { pageSize: 10, windowSize: 20 })
    const reads = vi.spyOn(b.log, 'read')
    const seen: number[][] = Array.from({ length: 40 }, () => [])
    // Half start at the end, half resume from the start (behind the window of 20).
    const stops = seen.map((list, i) => reader.follow('default', id, i % 2 === 0 ? 50 : 0, (page) => { list.push(...page.map((e) => e.seq)) }))
    for (let i = 51; i <= 60; i++) await a.log.append('default', id, [{ id: `h${i}`, line: line(`h${i}`) }])
    await until(() => seen.every((list) => list.at(-1) === 60))
    for (const stop of stops) stop()
    seen.forEach((list, i) => { expect(list).toEqual(Array.from({ length: i % 2 === 0 ? 10 : 60 }, (_, k) => (i % 2 === 0 ? 51 : 1) + k)) })
    // 20 catch-ups of 50 entries in pages of 10 (6 reads each, the last empty or short), shared reads for the rest.
    expect(reads.mock.calls.length).toBeLessThan(20 * 7 + 40)
    expect(reader.sessions).toBe(0)
    reads.mockRestore()
  })
})
