import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitBatch } from '../../../src/metrics/instruments.js'
import { createPool } from '../../../src/storage/postgres/pool.js'
import { PgSessionLog } from '../../../src/storage/postgres/session-log.js'
import { pgAvailable } from '../../helpers/pg.js'
import { PgContext, header, line, sessionId, type Instance } from './pg-context.js'

async function batchStats (): Promise<{ count: number, sum: number }> {
  const { values } = await commitBatch.get()
  const of = (name: string): number => values.find((v) => v.metricName === name && v.labels.storage === 'postgres')?.value ?? 0
  return { count: of('ss_commit_batch_entries_count'), sum: of('ss_commit_batch_entries_sum') }
}

describe.runIf(pgAvailable)('PostgreSQL session log', () => {
  const ctx = new PgContext()
  let a: Instance
  let b: Instance

  beforeAll(async () => {
    await ctx.setUp()
    a = await ctx.instance()
    b = await ctx.instance()
  })
  afterAll(async () => { await ctx.tearDown() })

  async function created (tenant = 'default'): Promise<string> {
    const id = sessionId()
    await a.log.create({ tenant, id, cwd: '/w', header: header(id) })
    return id
  }

  it('gives 20 writers split across two instances exactly one entry each, with contiguous seq', async () => {
    const id = await created()
    const results = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
      await (i % 2 === 0 ? a : b).log.append('default', id, [{ id: `w${i}`, line: line(`w${i}`) }])))
    expect(results.map((r) => r.firstSeq).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    const stored = await b.log.read('default', id, 0, 100)
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(stored.map((e) => e.id).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `w${i}`).sort())
    for (const r of results) expect((stored[r.firstSeq - 1] as { seq: number }).seq).toBe(r.lastSeq)
    expect((await a.log.state('default', id))?.entryCount).toBe(20)
  })

  it('group-commits concurrent appends to one session on one instance into shared transactions', async () => {
    const id = await created()
    const before = await batchStats()
    await Promise.all(Array.from({ length: 50 }, async (_, i) => await a.log.append('default', id, [{ id: `g${i}`, line: line(`g${i}`) }])))
    const after = await batchStats()
    expect(after.sum - before.sum).toBe(50)
    expect(after.count - before.count).toBeLessThan(50)
    expect((await a.log.read('default', id, 0, 100)).map((e) => e.id)).toEqual(Array.from({ length: 50 }, (_, i) => `g${i}`))
  })

  it('refuses a stale revision on B after a write on A (412), without failing the appends it shared a transaction with', async () => {
    const id = await created()
    const start = (await b.log.state('default', id))!.revision
    await a.log.append('default', id, [{ id: 'a1', line: line('a1') }])
    const [stale, fresh] = await Promise.allSettled([
      b.log.append('default', id, [{ id: 'b1', line: line('b1') }], { expectRevision: start }),
      b.log.append('default', id, [{ id: 'b2', line: line('b2') }]),
    ])
    expect(stale).toMatchObject({ status: 'rejected', reason: { code: 'SS_PRECONDITION_FAILED', statusCode: 412 } })
    expect(fresh).toMatchObject({ status: 'fulfilled', value: { firstSeq: 2 } })
    await expect(b.log.setLeaf('default', id, 'a1', start)).rejects.toMatchObject({ code: 'SS_PRECONDITION_FAILED' })
    await expect(b.log.delete('default', id, start)).rejects.toMatchObject({ code: 'SS_PRECONDITION_FAILED' })
    const now = (await a.log.state('default', id))!.revision
    expect(await b.log.setLeaf('default', id, 'a1', now)).toBe(now + 1)
    expect((await a.log.state('default', id))!.leafId).toBe('a1')
  })

  it('refuses an entry id the session already has, and only that append', async () => {
    const id = await created()
    await a.log.append('default', id, [{ id: 'x', line: line('x') }])
    const [dup, ok] = await Promise.allSettled([
      a.log.append('default', id, [{ id: 'x', line: line('x') }]),
      a.log.append('default', id, [{ id: 'y', line: line('y') }]),
    ])
    expect(dup).toMatchObject({ status: 'rejected', reason: { code: 'SS_INVALID_ARGUMENT' } })
    expect(ok).toMatchObject({ status: 'fulfilled', value: { firstSeq: 2, lastSeq: 2 } })
    await expect(a.log.append('default', id, [{ id: 'w', line: line('w') }, { id: 'w', line: line('w') }])).rejects.toMatchObject({ code: 'SS_INVALID_ARGUMENT' })
    await expect(a.log.append('default', 'nope', [{ id: 'z', line: line('z') }])).rejects.toMatchObject({ code: 'SS_SESSION_NOT_FOUND' })
  })

  it('keeps the exact lines: an export is byte for byte the session file', async () => {
    const file = readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'pi-v1-large-session.jsonl'), 'utf8')
    const [head, ...lines] = file.slice(0, -1).split('\n')
    const id = sessionId()
    await a.log.create({ tenant: 'default', id, cwd: '/w', header: head as string })
    for (let i = 0; i < lines.length; i += 300) {
      await a.log.append('default', id, lines.slice(i, i + 300).map((l, j) => ({ id: `e${i + j}`, line: l })))
    }
    expect(await b.log.exportJsonl('default', id, 128)).toBe(file)
  })

  it('keeps tenants apart: the same session id in two tenants', async () => {
    const id = sessionId()
    await a.log.create({ tenant: 't1', id, cwd: '/w', header: header(id) })
    await a.log.create({ tenant: 't2', id, cwd: '/w', header: header(id) })
    await expect(b.log.create({ tenant: 't1', id, cwd: '/w', header: header(id) })).rejects.toMatchObject({ code: 'SS_SESSION_EXISTS' })
    await a.log.append('t1', id, [{ id: 'only-t1', line: line('only-t1') }])
    expect(await b.log.read('t2', id, 0, 10)).toEqual([])
    expect((await b.log.read('t1', id, 0, 10)).map((e) => e.id)).toEqual(['only-t1'])
  })

  it('stores unsaved sessions and purges those untouched for the configured age, never saved ones', async () => {
    const unsaved = await created()
    const saved = await created()
    await a.log.append('default', saved, [{ id: 's', line: line('s') }], { save: true })
    expect(await b.log.purgeUnsaved(60_000)).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await b.log.purgeUnsaved(10)).toBeGreaterThanOrEqual(1)
    expect(await a.log.state('default', unsaved)).toBeUndefined()
    expect((await a.log.state('default', saved))?.unsaved).toBe(false)
  })

  it('answers a database outage with SS_DATABASE_UNAVAILABLE (503) within its connect timeout, never a hang', async () => {
    const pool = createPool('postgres://postgres@127.0.0.1:1/none', { connectTimeoutMs: 500 })
    const log = new PgSessionLog(pool)
    const started = Date.now()
    await expect(log.append('default', 'x', [{ id: 'a', line: line('a') }])).rejects.toMatchObject({ code: 'SS_DATABASE_UNAVAILABLE', statusCode: 503 })
    await expect(log.read('default', 'x', 0, 1)).rejects.toMatchObject({ code: 'SS_DATABASE_UNAVAILABLE' })
    expect(Date.now() - started).toBeLessThan(5000)
    await pool.end()
  })
})
