import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { SseClient } from '../sse-client.js'
import { buildTestApp } from '../helpers/app.js'
import { onPostgres } from '../helpers/pg-storage.js'
import { append, message, persistedSession, user } from './session-helpers.js'

/** The value of one sample line (`name{labels} value`) in a Prometheus exposition; 0 when absent. */
function sample (text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

async function scrape (app: App): Promise<string> {
  const res = await app.inject({ method: 'GET', url: '/metrics' })
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8')
  return res.body
}

const APPEND_201 = 'ss_http_requests_total{method="POST",route="/v1/sessions/:id/entries",status="201"}'
const MESSAGE = { type: 'message', message: { role: 'user', content: [{ type: 'text', text: 'hi' }] } }

describe('GET /metrics', () => {
  let app: App
  afterEach(async () => { await app.close() })

  it('counts requests by route pattern and status, append latency and commit batch sizes', async () => {
    app = await buildTestApp()
    const before = await scrape(app)
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/w' } })
    const { header } = created.json() as { header: { id: string } }
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({ method: 'POST', url: `/v1/sessions/${header.id}/entries`, payload: MESSAGE })
      expect(res.statusCode).toBe(201)
    }
    await app.inject({ method: 'GET', url: '/v1/sessions/not-there' })
    const after = await scrape(app)
    expect(sample(after, APPEND_201) - sample(before, APPEND_201)).toBe(3)
    const notFound = 'ss_http_requests_total{method="GET",route="/v1/sessions/:id",status="404"}'
    expect(sample(after, notFound) - sample(before, notFound)).toBe(1)
    expect(sample(after, 'ss_append_duration_seconds_count') - sample(before, 'ss_append_duration_seconds_count')).toBe(3)
    // The first assistant-less appends stay in memory (deferral), so commits are not asserted by count here.
    expect(after).toContain('# TYPE ss_commit_batch_entries histogram')
    expect(sample(after, 'ss_open_sessions')).toBeGreaterThanOrEqual(1)
    expect(sample(after, 'ss_storage_info{kind="memory"}')).toBe(1)
    expect(after).toMatch(/^process_cpu_user_seconds_total \d/m)
  })

  it('records one commit batch per group commit once a session is persisted', async () => {
    app = await buildTestApp()
    const { session } = await persistedSession(app)
    const label = onPostgres ? 'postgres' : 'file'
    const count = `ss_commit_batch_entries_count{storage="${label}"}`
    const total = `ss_commit_batch_entries_sum{storage="${label}"}`
    const before = await scrape(app)
    const result = await append(app, session.header.id, { entries: [message(user('a')), message(user('b'))] })
    expect(result.persisted).toBe(true)
    const after = await scrape(app)
    expect(sample(after, count) - sample(before, count)).toBe(1)
    expect(sample(after, total) - sample(before, total)).toBe(2)
  })

  it('reports live SSE streams while they are open', async () => {
    app = await buildTestApp()
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/w' } })
    const { header } = created.json() as { header: { id: string } }
    const idle = sample(await scrape(app), 'ss_open_streams')
    const client = await SseClient.connect(`${base}/v1/sessions/${header.id}/events`)
    expect(client.statusCode).toBe(200)
    expect(sample(await scrape(app), 'ss_open_streams')).toBe(idle + 1)
    client.close()
  })

  it('is public and documented in the OpenAPI document', async () => {
    app = await buildTestApp()
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, { get?: { security?: unknown[] } }> }
    expect(doc.paths['/metrics']?.get?.security).toEqual([])
  })
})
