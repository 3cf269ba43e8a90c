/**
 * API.md "Live stream (SSE)" through the OpenAPI client: the streams answer `text/event-stream`
 * (status, type and headers are checked by the client like any answer), start with
 * `retry: 1000`, and the session stream answers its errors before streaming.
 */
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createSession, ctx, expectProblem, FAILING, persistedSession } from './context.js'

/** Reads the stream until `wanted` has arrived, then cancels it. */
async function readUntil (stream: ReadableStream<Uint8Array> | null | undefined, wanted: string): Promise<string> {
  if (stream === null || stream === undefined) throw new Error('no stream')
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let text = ''
  try {
    while (!text.includes(wanted)) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
  } finally {
    await reader.cancel()
  }
  return text
}

export function eventsSuite (): void {
  describe('GET /v1/sessions/{id}/events', () => {
    it('streams entries after Last-Event-ID (200 text/event-stream)', async () => {
      const { id, ids } = await persistedSession()
      const res = await ctx.client.GET('/v1/sessions/{id}/events', {
        params: { path: { id }, header: { 'last-event-id': '1' } }, parseAs: 'stream',
      })
      expect(res.response.status).toBe(200)
      const text = await readUntil(res.data, `"id":"${ids[1] as string}"`)
      expect(text.startsWith('retry: 1000\n\n')).toBe(true)
      expect(text).toContain('event: entry\nid: 2\n')
      expect(text).not.toContain('id: 1\n')
    })

    it('sends image data as base64, or as blob refs with ?blobs=ref', async () => {
      const bytes = Buffer.alloc(1200, 9)
      const ref = `blob:sha256:${createHash('sha256').update(bytes).digest('hex')}`
      const id = (await createSession()).header.id
      const content = [{ type: 'image', data: bytes.toString('base64'), mimeType: 'image/png' }]
      await ctx.client.POST('/v1/sessions/{id}/entries', {
        params: { path: { id } }, body: { entries: [{ type: 'message', message: { role: 'user', content, timestamp: 1 } }] },
      })
      for (const blobs of [undefined, 'ref'] as const) {
        const query = blobs === undefined ? {} : { blobs }
        const res = await ctx.client.GET('/v1/sessions/{id}/events', { params: { path: { id }, query }, parseAs: 'stream' })
        const text = await readUntil(res.data, '"mimeType":"image/png"')
        expect(text.includes(ref), String(blobs)).toBe(blobs === 'ref')
      }
    })

    it('answers 400, 404, 422 and 507 before streaming', async () => {
      const { id } = await persistedSession()
      const bad = { params: { path: { id }, header: { 'last-event-id': 'x' } }, parseAs: 'stream' as const }
      expectProblem(await ctx.client.GET('/v1/sessions/{id}/events', bad), 400, 'SS_VALIDATION')
      for (const [sid, status, code] of FAILING) {
        const res = await ctx.client.GET('/v1/sessions/{id}/events', { params: { path: { id: sid } }, parseAs: 'stream' })
        expectProblem(res, status, code)
      }
    })
  })

  describe('GET /v1/events', () => {
    it('streams session lifecycle events (200 text/event-stream)', async () => {
      const res = await ctx.client.GET('/v1/events', { parseAs: 'stream' })
      expect(res.response.status).toBe(200)
      const created = persistedSession()
      const text = await readUntil(res.data, '"firstMessage"')
      await created
      expect(text.startsWith('retry: 1000\n\n')).toBe(true)
      expect(text).toMatch(/event: session-created\nid: \S+\ndata: \{/)
    })
  })
}
