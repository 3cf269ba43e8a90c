/**
 * No client makes the server unreachable: the real server, with tokens and its default limits,
 * runs under `ulimit -n 256`. Clients on 127.0.0.1 (and other addresses of 127/8, all on the
 * loopback interface) attack it; health probes come from 127.0.0.2 and must be answered 200
 * within 2 s every time.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { get } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { connectionCaps } from '../../src/http/descriptor-limit.js'
import { builtServer } from '../helpers/build.js'
import { startServer, type ServerProcess } from '../helpers/server-process.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'

const DESCRIPTOR_LIMIT = 256
const PROBE_TIMEOUT_MS = 2000
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))
/** Polls `check` every 50 ms, for at most `ms`, and resolves its last answer. */
async function settle<T> (check: () => T, done: (value: T) => boolean, ms = 5000): Promise<T> {
  for (let waited = 0; !done(check()) && waited < ms; waited += 50) await sleep(50)
  return check()
}

let server: ServerProcess
let port: number
let fx: TokenFixture
let dataDir: string
const sockets = new Set<Socket>()
let attacking = false

beforeAll(async () => {
  fx = await tokenFixture()
  dataDir = mkdtempSync(join(tmpdir(), 'ss-exhaust-'))
  server = await startServer({ DATA_DIR: dataDir, AUTH_TOKENS_FILE: fx.path }, 15_000, builtServer(), DESCRIPTOR_LIMIT)
  port = Number(new URL(server.baseUrl).port)
}, 30_000)
afterAll(async () => {
  server.child.kill('SIGKILL')
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
  fx.cleanup()
})
afterEach(async () => {
  attacking = false
  for (const s of sockets) s.destroy()
  sockets.clear()
  await sleep(300) // the server sees the closes
})

/** `GET /healthz` from `from`: its status (0 when it failed) and how long it took. */
async function probe (from = '127.0.0.2'): Promise<{ status: number, ms: number }> {
  const start = Date.now()
  return await new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/healthz', localAddress: from, agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - start }))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve({ status: 0, ms: Date.now() - start }))
  })
}

/** A socket from `from` to the server, tracked for clean-up; `onClose` runs when it closes. */
function open (from: string, onConnect: (s: Socket) => void = () => {}, onClose: () => void = () => {}): Socket {
  const s = connect({ port, host: '127.0.0.1', localAddress: from })
  sockets.add(s)
  s.on('error', () => {})
  s.resume()
  s.on('connect', () => onConnect(s))
  s.once('close', () => { sockets.delete(s); onClose() })
  return s
}

/** A client that sends complete headers, then one body byte every `everyMs`; reconnects when cut while attacking. */
function dribbler (from: string, headers: string, everyMs: number): void {
  open(from, (s) => {
    s.write(headers)
    const timer = setInterval(() => { if (s.writable) s.write('x') }, everyMs)
    s.once('close', () => clearInterval(timer))
  }, () => { if (attacking) setTimeout(() => dribbler(from, headers, everyMs), 50) })
}

/** Probes every 200 ms until `until` resolves; returns how many probes ran and the ones not 200 within the timeout. */
async function probeUntil (until: Promise<unknown>): Promise<{ probes: number, failed: Array<{ status: number, ms: number }> }> {
  const state = { done: false }
  void until.finally(() => { state.done = true })
  const failed: Array<{ status: number, ms: number }> = []
  let probes = 0
  while (!state.done) {
    const result = await probe()
    probes++
    if (result.status !== 200 || result.ms >= PROBE_TIMEOUT_MS) failed.push(result)
    await sleep(200)
  }
  return { probes, failed }
}

const alive = (): boolean => server.child.exitCode === null && server.child.signalCode === null

describe(`a tokened server under ulimit -n ${DESCRIPTOR_LIMIT}`, () => {
  it('logs the connection caps that its descriptor limit allows', () => {
    const defaults = loadConfig({ AUTH_TOKENS_FILE: 'tokens.json' })
    const caps = connectionCaps({ total: defaults.maxConnections, perClient: defaults.maxConnectionsPerClient }, DESCRIPTOR_LIMIT)
    const line = server.output.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'connection caps')
    expect(line).toMatchObject({ descriptorLimit: DESCRIPTOR_LIMIT, maxConnections: caps.total, maxConnectionsPerClient: caps.perClient })
  })

  it('answers probes from another address while 240 clients dribble bodies without a token, and cuts a dribbled body with a token', async () => {
    attacking = true
    const headers = 'POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{'
    for (let i = 0; i < 240; i++) dribbler('127.0.0.1', headers, 5000)
    await sleep(1000)
    // An authenticated body, dribbled the same way from a third address.
    let answer = ''
    const start = Date.now()
    const cut = new Promise<number>((resolve) => {
      open('127.0.0.3', (s) => {
        s.on('data', (chunk: Buffer) => { answer += chunk.toString() })
        s.write(`POST /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer(fx.secrets.write).authorization}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{')
        const timer = setInterval(() => { if (s.writable) s.write(' ') }, 5000)
        s.once('close', () => clearInterval(timer))
      }, () => resolve(Date.now() - start))
    })
    // At least 12 s of probes (two bytes of every dribbler), and until the dribbled body with a token is cut.
    const { probes, failed } = await probeUntil(Promise.all([Promise.race([cut, sleep(25_000)]), sleep(12_000)]))
    expect(failed).toEqual([])
    expect(probes).toBeGreaterThan(20)
    expect(await Promise.race([cut, sleep(0).then(() => Number.POSITIVE_INFINITY)])).toBeLessThan(20_000)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(alive()).toBe(true)
  }, 60_000)

  it('answers probes while one address holds its whole cap, and while a few addresses fill every place', async () => {
    const defaults = loadConfig({ AUTH_TOKENS_FILE: 'tokens.json' })
    const caps = connectionCaps({ total: defaults.maxConnections, perClient: defaults.maxConnectionsPerClient }, DESCRIPTOR_LIMIT)
    // Idle connections: they hold their place until CONNECTION_TIMEOUT_MS (60 s).
    const held = (from: string, n: number): Socket[] => Array.from({ length: n }, () => open(from))
    const first = held('127.0.0.1', caps.perClient + 20)
    // The server closes the 20 beyond the address's cap as it accepts them.
    expect(await settle(() => first.filter((s) => !s.destroyed).length, (n) => n <= caps.perClient)).toBe(caps.perClient)
    for (let i = 0; i < 5; i++) expect(await probe()).toMatchObject({ status: 200 })
    // Two more addresses: together with the first they ask for more places than there are.
    held('127.0.0.4', caps.perClient)
    held('127.0.0.5', caps.perClient)
    expect(await settle(() => [...sockets].filter((s) => !s.destroyed).length, (n) => n <= caps.total)).toBeLessThanOrEqual(caps.total)
    for (let i = 0; i < 5; i++) {
      const result = await probe()
      expect(result.status).toBe(200)
      expect(result.ms).toBeLessThan(PROBE_TIMEOUT_MS)
    }
    expect(alive()).toBe(true)
  }, 30_000)

  it('survives running out of descriptors on accept, and serves again once they are free', async () => {
    const pid = server.child.pid!
    const inUse = readdirSync(`/proc/${pid}/fd`).length
    // Fewer descriptors than the connection caps assume: accepting runs into EMFILE.
    expect(spawnSync('prlimit', ['--pid', String(pid), `--nofile=${inUse + 10}:${DESCRIPTOR_LIMIT}`]).status).toBe(0)
    try {
      for (let i = 0; i < 60; i++) open('127.0.0.6')
      await sleep(1500)
      expect(alive()).toBe(true)
      for (const s of sockets) s.destroy()
      await sleep(500)
      // Still under the lowered limit: the freed descriptors are enough.
      for (let i = 0; i < 3; i++) expect(await probe()).toMatchObject({ status: 200 })
    } finally {
      spawnSync('prlimit', ['--pid', String(pid), `--nofile=${DESCRIPTOR_LIMIT}:${DESCRIPTOR_LIMIT}`])
    }
    expect(alive()).toBe(true)
  }, 30_000)
})
