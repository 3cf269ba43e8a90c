/** Requests too malformed to reach routing still get problem+json (not Fastify's default JSON). */
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'

let app: App
let port: number
beforeAll(async () => {
  app = await buildTestApp()
  port = Number(new URL(await app.listen({ host: '127.0.0.1', port: 0 })).port)
})
afterAll(async () => { await app.close() })

async function raw (request: string): Promise<{ status: number, type: string, body: Record<string, unknown> }> {
  const text = await new Promise<string>((resolve) => {
    let out = ''
    const socket = net.connect(port, '127.0.0.1', () => socket.end(request))
    socket.on('data', (d) => { out += d.toString() }).on('close', () => resolve(out)).on('error', () => resolve(out))
  })
  const [head = '', body = ''] = text.split('\r\n\r\n')
  return {
    status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]),
    type: /content-type: ([^\r\n]+)/i.exec(head)?.[1] ?? '',
    body: JSON.parse(body) as Record<string, unknown>,
  }
}

describe('malformed HTTP', () => {
  it.each([
    ['a header without a colon', 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'],
    ['a garbage request line', 'GARBAGE\r\n\r\n'],
    ['a non-numeric Content-Length', 'POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
  ])('%s is 400 problem+json', async (_, request) => {
    const res = await raw(request)
    expect(res.status).toBe(400)
    expect(res.type).toBe('application/problem+json')
    expect(res.body).toMatchObject({ status: 400, code: 'SS_BAD_REQUEST', title: 'Bad Request' })
  })

  it('headers over the size limit are 431 problem+json', async () => {
    const res = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(res.status).toBe(431)
    expect(res.body).toMatchObject({ status: 431, code: 'SS_HEADERS_TOO_LARGE' })
  })
})
