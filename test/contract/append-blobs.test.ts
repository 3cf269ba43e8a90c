/**
 * API.md "Blobs" and "Conventions" on appends: an image that qualifies is fetchable by its hash
 * as soon as the append answers (deferred sessions included), and a client that uploads bytes
 * and appends the returned `ref` reads base64 back unless it asks for `?blobs=ref`.
 */
import { createHash } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { append, createSession, type Json } from '../http/session-helpers.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

const image = (data: string): Json => ({ type: 'image', data, mimeType: 'image/png' })
const userWith = (content: Json[]): Json => ({ type: 'message', message: { role: 'user', content, timestamp: 1 } })
const firstImageData = (entry: unknown): unknown =>
  ((entry as { message: { content: Array<{ data: unknown }> } }).message.content[0] as { data: unknown }).data

async function upload (bytes: Buffer): Promise<{ hash: string, ref: string }> {
  const res = await app.inject({
    method: 'POST', url: '/v1/blobs', payload: bytes, headers: { 'content-type': 'application/octet-stream' },
  })
  expect(res.statusCode).toBe(201)
  return res.json()
}

describe('images of an append', () => {
  it('are stored at once: the ref of a deferred session is fetchable by its hash', async () => {
    const bytes = Buffer.alloc(2000, 7)
    const hash = createHash('sha256').update(bytes).digest('hex')
    const s = await createSession(app)
    const result = await append(app, s.header.id, userWith([image(bytes.toString('base64'))]))
    expect(result.persisted).toBe(false)
    const blob = await app.inject({ method: 'GET', url: `/v1/blobs/sha256/${hash}` })
    expect(blob.statusCode).toBe(200)
    expect(blob.rawPayload.equals(bytes)).toBe(true)
  })

  it('that name an uploaded blob by ref read back as base64, and as the ref with ?blobs=ref', async () => {
    const bytes = Buffer.alloc(1500, 3)
    const { ref } = await upload(bytes)
    const s = await createSession(app)
    const id = s.header.id
    const result = await append(app, id, userWith([image(ref)]))
    const entryId = result.entries[0]?.id as string
    expect(firstImageData(result.entries[0])).toBe(bytes.toString('base64'))
    const inline = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries/${entryId}` })
    expect(firstImageData(inline.json())).toBe(bytes.toString('base64'))
    const context = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/context` })
    expect(context.json().messages[0].content[0].data).toBe(bytes.toString('base64'))
    const asRef = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries/${entryId}?blobs=ref` })
    expect(firstImageData(asRef.json())).toBe(ref)
  })

  it('keep a ref whose blob does not exist, as loading does', async () => {
    const missing = `blob:sha256:${'0'.repeat(64)}`
    const s = await createSession(app)
    const result = await append(app, s.header.id, userWith([image(missing)]))
    expect(firstImageData(result.entries[0])).toBe(missing)
  })
})
