/**
 * Connections are bounded: a request must arrive whole within REQUEST_TIMEOUT_MS (its headers
 * within HEADERS_TIMEOUT_MS), idle sockets close, live streams are exempt from both, and
 * MAX_CONNECTIONS / MAX_CONNECTIONS_PER_CLIENT cap the sockets held open. Load shedding samples
 * nothing that needs a file descriptor, so running out of descriptors cannot crash the process.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { buildTestApp } from '../helpers/app.js'
import { builtServer } from '../helpers/build.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'

const ROOT = join(import.meta.dirname, '..', '..')
const apps: App[] = []
const sockets: Socket[] = []
let fx: TokenFixture | undefined
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  for (const app of apps.splice(0)) await app.close()
  fx?.cleanup()
  fx = undefined
})

async function listening (config: Partial<Config>): Promise<{ app: App, port: number }> {
  fx = await tokenFixture()
  const app = await buildTestApp({ tokens: await fx.load(), config })
  apps.push(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as { port: number }).port }
}

async function socket (port: number): Promise<Socket> {
  const s = connect({ port, host: '127.0.0.1' })
  sockets.push(s)
  s.on('error', () => {})
  s.resume() // read what the server sends, so that its closing is seen
  await once(s, 'connect')
  return s
}

/** Resolves with the ms until `s` closes, or `Infinity` when it is still open after `withinMs`. */
async function closesWithin (s: Socket, withinMs: number): Promise<number> {
  const start = Date.now()
  if (s.destroyed) return 0
  return await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(Number.POSITIVE_INFINITY), withinMs)
    s.once('close', () => { clearTimeout(timer); resolve(Date.now() - start) })
  })
}

/** Sends one byte every `everyMs` ms while `s` is open. */
function dribble (s: Socket, everyMs: number): void {
  const timer = setInterval(() => { if (s.writable) s.write('x'); else clearInterval(timer) }, everyMs)
  s.once('close', () => clearInterval(timer))
}

describe('request, header and idle timeouts', () => {
  it('cuts a client that dribbles its body, even after it was answered 401', async () => {
    const { port } = await listening({ requestTimeoutMs: 1000, headersTimeoutMs: 500 })
    const s = await socket(port)
    s.write('POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{')
    dribble(s, 100)
    expect(await closesWithin(s, 6000)).toBeLessThan(6000)
  }, 20_000)

  it('cuts a client that never finishes its headers', async () => {
    const { port } = await listening({ requestTimeoutMs: 2000, headersTimeoutMs: 500 })
    const s = await socket(port)
    s.write('GET /v1/sessions HTTP/1.1\r\nHost: x\r\n')
    const timer = setInterval(() => { if (s.writable) s.write('X-A: b\r\n') }, 100)
    try {
      expect(await closesWithin(s, 6000)).toBeLessThan(6000)
    } finally {
      clearInterval(timer)
    }
  }, 20_000)

  it('closes an idle socket after CONNECTION_TIMEOUT_MS but keeps a live stream open longer', async () => {
    const { port } = await listening({ requestTimeoutMs: 1000, headersTimeoutMs: 500, connectionTimeoutMs: 700, keepAliveTimeoutMs: 500 })
    const idle = await socket(port)
    expect(await closesWithin(idle, 5000)).toBeLessThan(5000)
    const stream = await socket(port)
    stream.write(`GET /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer(fx!.secrets.read).authorization}\r\n\r\n`)
    let head = ''
    stream.on('data', (chunk: Buffer) => { head += chunk.toString() })
    expect(await closesWithin(stream, 3000)).toBe(Number.POSITIVE_INFINITY)
    expect(head).toMatch(/^HTTP\/1\.1 200/)
  }, 20_000)
})

describe('connection caps', () => {
  it('refuses connections beyond MAX_CONNECTIONS_PER_CLIENT from one address; a freed one is reusable', async () => {
    const { port } = await listening({ maxConnectionsPerClient: 3 })
    const held = [await socket(port), await socket(port), await socket(port)]
    const extra = await socket(port)
    expect(await closesWithin(extra, 3000)).toBeLessThan(3000)
    for (const s of held) expect(s.destroyed).toBe(false)
    held[0]!.destroy()
    await new Promise((resolve) => setTimeout(resolve, 100))
    const again = await socket(port)
    expect(await closesWithin(again, 500)).toBe(Number.POSITIVE_INFINITY)
  }, 20_000)

  it('refuses connections beyond MAX_CONNECTIONS in total', async () => {
    const { port } = await listening({ maxConnections: 2 })
    await socket(port)
    await socket(port)
    expect(await closesWithin(await socket(port), 3000)).toBeLessThan(3000)
  }, 20_000)
})

describe('running out of file descriptors', () => {
  it('does not crash the server: load shedding samples nothing that needs a descriptor', async () => {
    fx = await tokenFixture()
    // No connection caps, so that the connections really exhaust the 256 descriptors.
    const child = spawn('prlimit', ['--nofile=256', process.execPath, builtServer()], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        STORAGE: 'memory',
        AUTH_TOKENS_FILE: fx.path,
        MAX_CONNECTIONS: '0',
        MAX_CONNECTIONS_PER_CLIENT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
    const exited = once(child, 'exit')
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start: ${stderr}`)), 30_000)
        createInterface({ input: child.stdout }).on('line', (line) => {
          const m = /"address":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(line)
          if (m !== null) { clearTimeout(timer); resolve(Number(m[1])) }
        })
      })
      // More dribbling, unauthenticated connections than descriptors, held across several samples.
      for (let i = 0; i < 300; i++) {
        const s = connect({ port, host: '127.0.0.1' })
        s.on('error', () => {})
        sockets.push(s)
        s.on('connect', () => { s.write('POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{') })
      }
      const died = await Promise.race([exited.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 4000))])
      expect(died, stderr).toBe(false)
      for (const s of sockets.splice(0)) s.destroy()
      await new Promise((resolve) => setTimeout(resolve, 500))
      const res = await fetch(`http://127.0.0.1:${port}/healthz`)
      expect(res.status).toBe(200)
    } finally {
      child.kill('SIGKILL')
      await exited
    }
  }, 60_000)
})
