/**
 * Bodies the server will not read close their connection at once, and bodies that stop coming
 * are cut after BODY_STALL_TIMEOUT_MS with 408, while a body that keeps coming is read whole.
 * Real sockets throughout: `inject` has no connection to hold.
 */
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { MIN_BODY_BYTES } from '../../src/http/stalled-bodies.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'

const apps: App[] = []
const sockets: Socket[] = []
let fx: TokenFixture | undefined
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  for (const app of apps.splice(0)) await app.close()
  fx?.cleanup()
  fx = undefined
})

async function listening (config: Partial<Config> = {}): Promise<number> {
  fx = await tokenFixture()
  const app = await buildTestApp({ tokens: await fx.load(), config })
  apps.push(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as { port: number }).port
}

/** A raw connection, with what the server sends collected and the ms until it closed. */
interface Raw { socket: Socket, received: () => string, closed: Promise<number> }

async function raw (port: number): Promise<Raw> {
  const socket = connect({ port, host: '127.0.0.1' })
  sockets.push(socket)
  socket.on('error', () => {})
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString() })
  await once(socket, 'connect')
  const start = Date.now()
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - start)))
  return { socket, received: () => text, closed }
}

/** Ms until `closed` settles, or `Infinity` when it is still open after `withinMs`. */
async function within (closed: Promise<number>, withinMs: number): Promise<number> {
  return await Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(Number.POSITIVE_INFINITY), withinMs))])
}

/** Sends one byte every `everyMs` ms while `s` is open. */
function dribble (s: Socket, everyMs: number): void {
  const timer = setInterval(() => { if (s.writable) s.write(' '); else clearInterval(timer) }, everyMs)
  s.once('close', () => clearInterval(timer))
}

const head = (path: string, headers: Record<string, string>): string =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`

describe('a request refused before its body is read', () => {
  const refusals: Array<[string, (fx: TokenFixture) => Record<string, string>, number]> = [
    ['without a token', () => ({}), 401],
    ['with a token that may only read', (f) => bearer(f.secrets.read), 403],
    ['with a body over BODY_LIMIT', (f) => bearer(f.secrets.write), 413],
    ['with a type no route takes', (f) => ({ ...bearer(f.secrets.write), 'Content-Type': 'application/xml' }), 415],
  ]
  for (const [name, headers, status] of refusals) {
    it(`is answered ${status} and closed at once: ${name}`, async () => {
      const port = await listening({ bodyLimit: 1000 })
      const c = await raw(port)
      const length = status === 413 ? '1000000000' : '900'
      c.socket.write(head('/v1/sessions', { 'Content-Type': 'application/json', ...headers(fx!), 'Content-Length': length }) + '{')
      dribble(c.socket, 100)
      expect(await within(c.closed, 1500)).toBeLessThan(1500)
      expect(c.received()).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
      expect(c.received().toLowerCase()).toContain('connection: close')
    })
  }

  it('is answered 429 and closed at once when rate limited', async () => {
    const port = await listening({ rateLimitMax: 1 })
    const first = await fetch(`http://127.0.0.1:${port}/v1/sessions`, { headers: bearer(fx!.secrets.read) })
    expect(first.status).toBe(200)
    const c = await raw(port)
    c.socket.write(head('/v1/sessions', { 'Content-Type': 'application/json', ...bearer(fx!.secrets.read), 'Content-Length': '900' }) + '{')
    dribble(c.socket, 100)
    expect(await within(c.closed, 1500)).toBeLessThan(1500)
    expect(c.received()).toMatch(/^HTTP\/1\.1 429 /)
  })

  it('keeps the connection of a refused request whose body had arrived whole', async () => {
    const port = await listening()
    const c = await raw(port)
    c.socket.write(head('/v1/sessions', { 'Content-Type': 'application/json', 'Content-Length': '2' }) + '{}')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(c.received()).toMatch(/^HTTP\/1\.1 401 /)
    expect(c.received().toLowerCase()).not.toContain('connection: close')
    expect(await within(c.closed, 300)).toBe(Number.POSITIVE_INFINITY)
  })
})

describe('a body that stalls', () => {
  it('is cut with 408 after BODY_STALL_TIMEOUT_MS, long before REQUEST_TIMEOUT_MS', async () => {
    const port = await listening({ bodyStallTimeoutMs: 500, requestTimeoutMs: 60_000 })
    const c = await raw(port)
    c.socket.write(head('/v1/sessions', { 'Content-Type': 'application/json', ...bearer(fx!.secrets.write), 'Content-Length': '100000' }) + '{')
    dribble(c.socket, 100) // a byte every 100 ms: never silent, never 1 KiB in a window
    const ms = await within(c.closed, 5000)
    expect(ms).toBeGreaterThanOrEqual(400)
    expect(ms).toBeLessThan(2000)
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /)
    expect(c.received()).toContain('"code":"SS_REQUEST_TIMEOUT"')
  })

  it('is not one while it brings a window\'s worth of bytes in each window', async () => {
    const port = await listening({ bodyStallTimeoutMs: 500 })
    const created = await fetch(`http://127.0.0.1:${port}/v1/sessions`, {
      method: 'POST', headers: { ...bearer(fx!.secrets.write), 'content-type': 'application/json' }, body: '{"cwd":"/p"}',
    })
    const id = (await created.json() as { header: { id: string } }).header.id
    const body = Buffer.from(JSON.stringify({ type: 'custom', customType: 'slow', data: 'd'.repeat(8 * MIN_BODY_BYTES) }))
    const c = await raw(port)
    c.socket.write(head(`/v1/sessions/${id}/entries`, { 'Content-Type': 'application/json', ...bearer(fx!.secrets.write), 'Content-Length': String(body.length) }))
    // MIN_BODY_BYTES every 300 ms: slow, but more than the floor in every 500 ms window.
    for (let at = 0; at < body.length; at += MIN_BODY_BYTES) {
      c.socket.write(body.subarray(at, at + MIN_BODY_BYTES))
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(c.received()).toMatch(/^HTTP\/1\.1 201 /)
  })
})

describe('a request that does not arrive in time', () => {
  it('is answered 408 and closed when its body keeps coming past REQUEST_TIMEOUT_MS', async () => {
    const port = await listening({ requestTimeoutMs: 1000, headersTimeoutMs: 500, bodyStallTimeoutMs: 60_000 })
    const c = await raw(port)
    c.socket.write(head('/v1/sessions', { 'Content-Type': 'application/json', ...bearer(fx!.secrets.write), 'Content-Length': '10000000' }) + '{')
    // Far more than MIN_BODY_BYTES per window: never a stall, only too slow for the whole request.
    const timer = setInterval(() => { if (c.socket.writable) c.socket.write(' '.repeat(4 * MIN_BODY_BYTES)) }, 100)
    try {
      expect(await within(c.closed, 5000)).toBeLessThan(5000)
    } finally {
      clearInterval(timer)
    }
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /)
    expect(c.received()).toContain('"code":"SS_REQUEST_TIMEOUT"')
  })

  it('is answered 408 and closed when its headers never end', async () => {
    const port = await listening({ requestTimeoutMs: 2000, headersTimeoutMs: 500 })
    const c = await raw(port)
    c.socket.write('GET /v1/sessions HTTP/1.1\r\nHost: x\r\n')
    expect(await within(c.closed, 5000)).toBeLessThan(5000)
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /)
  })
})
