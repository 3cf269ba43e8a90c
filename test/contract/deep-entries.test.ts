/**
 * Entries nested deeper than any request body may be (files written by other agents) never
 * overflow a walk: reading, forking and `?blobs=ref` answer them, and the JSONL depth check is
 * not fooled by a torn line whose last character escapes the newline.
 */
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../src/plugins/json-depth.js'
import { MemorySessionStorage } from '../../src/storage/index.js'
import { buildTestApp, testConfig } from '../helpers/app.js'

const DEPTH = 3000
const deep = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`
const HEADER = JSON.stringify({ type: 'session', version: 3, id: 'deep', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/deep' })
const userAt = (depth: number): string => `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi","meta":${deep(depth)}}],"timestamp":1}}`
const USER = userAt(DEPTH)
const ASSISTANT = JSON.stringify({
  type: 'message',
  id: 'a1',
  parentId: 'u1',
  timestamp: '2026-01-01T00:00:02.000Z',
  message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }], provider: 'p', model: 'm', timestamp: 2 },
})

describe('the JSONL depth check and a torn line ending in an escape', () => {
  it('measures the line after `"\\` on its own', () => {
    expect(nestedDeeperThan(`{"a":"\\\n{"b":${deep(5)}}\n`, 4, true)).toBe(true)
    expect(nestedDeeperThan(`{"a":"\\\n{"b":${deep(2)}}\n`, 4, true)).toBe(false)
  })

  it('an import hiding a depth-5,000 line behind such a torn line is 400, not 500', async () => {
    const app = await buildTestApp()
    try {
      const payload = `${HEADER}\n{"x":"\\\n${USER.replace(deep(DEPTH), deep(5000))}\n${ASSISTANT}\n`
      const res = await app.inject({ method: 'POST', url: '/v1/sessions/import', headers: { 'content-type': 'application/x-ndjson' }, payload })
      expect([res.statusCode, res.json().code]).toEqual([400, 'SS_INVALID_JSON'])
    } finally {
      await app.close()
    }
  })
})

describe.each([DEPTH, 20_000])('a stored session with an entry nested %i levels deep', (depth) => {
  let app: App
  beforeEach(async () => {
    expect(depth).toBeGreaterThan(MAX_JSON_DEPTH)
    const storage = new MemorySessionStorage()
    const dataDir = testConfig().dataDir
    storage.writeTextSync(join(dataDir, 'sessions', '--deep--', '2026-01-01T00-00-00-000Z_deep.jsonl'), `${HEADER}\n${userAt(depth)}\n${ASSISTANT}\n`)
    app = await buildTestApp({ storage })
  })
  afterEach(async () => { await app.close() })

  it('is read, with and without ?blobs=ref', async () => {
    for (const url of ['/v1/sessions/deep/entries', '/v1/sessions/deep/entries?blobs=ref', '/v1/sessions/deep/context?blobs=ref', '/v1/sessions/deep/export']) {
      const res = await app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(200)
    }
  })

  it('is forked whole and from an entry', async () => {
    const fork = await app.inject({ method: 'POST', url: '/v1/sessions/deep/fork' })
    expect(fork.statusCode).toBe(201)
    const copy = await app.inject({ method: 'GET', url: `/v1/sessions/${fork.json().header.id as string}/export` })
    expect(copy.body).toContain(deep(depth))
    const branch = await app.inject({ method: 'POST', url: '/v1/sessions/deep/fork', payload: { leafId: 'u1' } })
    expect(branch.statusCode).toBe(201)
  })

  it('takes appends after it', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/sessions/deep/entries', payload: { type: 'custom', customType: 'note' } })
    expect(res.statusCode).toBe(201)
  })
})
