/**
 * Answers about sessions from odd but valid files (SPEC.md §5.4, files of other writers): the
 * header comes back verbatim (API.md "Session") and no read fails on a record that lacks a
 * field the model never requires.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'

let app: App
beforeAll(async () => { app = await buildTestApp() })
afterAll(async () => { await app.close() })

const HEADER = { type: 'session', version: 3, id: 'odd-file', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/odd', title: 42, provider: { name: 'x' } }
const RECORDS = [
  HEADER,
  { type: 'message', id: 'm1', parentId: null, message: { role: 'user', content: 'no timestamp on this entry', timestamp: 1 } },
  { type: 'service_tier_change', id: 'x1', parentId: 'm1', timestamp: '2026-01-01T00:00:02.000Z', tier: 'flex' },
]

describe('a session from an odd file', () => {
  beforeAll(async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/sessions/import',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: RECORDS.map((r) => JSON.stringify(r)).join('\n') + '\n',
    })
    expect(res.statusCode, res.body).toBe(201)
  })

  it('answers its header verbatim, unknown keys and odd values included', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/sessions/odd-file' })
    expect(res.statusCode).toBe(200)
    expect(res.json().header).toEqual(HEADER)
  })

  it('answers its tree, entries and context although an entry has no timestamp', async () => {
    const tree = await app.inject({ method: 'GET', url: '/v1/sessions/odd-file/tree' })
    expect(tree.statusCode).toBe(200)
    expect(tree.json().nodes.map((n: { id: string }) => n.id)).toEqual(['m1', 'x1'])
    const entries = await app.inject({ method: 'GET', url: '/v1/sessions/odd-file/entries' })
    expect(entries.json().entries[1]).toEqual(RECORDS[2])
    const context = await app.inject({ method: 'GET', url: '/v1/sessions/odd-file/context' })
    expect(context.json().messages).toEqual([{ role: 'user', content: 'no timestamp on this entry', timestamp: 1 }])
  })
})
