import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { DatabaseUnavailable } from '../../src/errors.js'
import { databaseError } from '../../src/storage/postgres/pool.js'
import { buildTestApp } from '../helpers/app.js'

describe('a database outage', () => {
  let app: App
  afterEach(async () => { await app.close() })

  it('answers 503 SS_DATABASE_UNAVAILABLE with Retry-After and without the cause', async () => {
    app = await buildTestApp()
    app.get('/probe', { config: { scope: 'public' } }, async () => {
      throw databaseError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
    })
    const res = await app.inject({ method: 'GET', url: '/probe' })
    expect(res.statusCode).toBe(503)
    expect(res.headers['retry-after']).toBe('2')
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      code: 'SS_DATABASE_UNAVAILABLE',
      detail: 'The database is unavailable; retry after the time in Retry-After',
    })
    expect(res.body).not.toContain('ECONNREFUSED')
  })

  it('tells outages from query errors', () => {
    for (const err of [
      Object.assign(new Error('x'), { code: '57P01' }), // admin_shutdown: the database restarts
      Object.assign(new Error('x'), { code: '08006' }), // connection_failure
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated unexpectedly'),
    ]) expect(databaseError(err)).toBeInstanceOf(DatabaseUnavailable)
    const syntax = Object.assign(new Error('syntax error'), { code: '42601' })
    expect(databaseError(syntax)).toBe(syntax)
  })
})
