/**
 * The real server process (`src/server.ts`) with tokens: SIGHUP reloads AUTH_TOKENS_FILE
 * without dropping connections (a live stream keeps streaming), a broken file keeps the old
 * tokens, and a non-loopback HOST without tokens refuses to start unless ALLOW_UNAUTHENTICATED=1.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { addToken } from '../../src/auth/tokens.js'
import { startServer, type ServerProcess } from '../helpers/server-process.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'

let fx: TokenFixture
let dataDir: string
let agent: Agent
const servers: ServerProcess[] = []
beforeEach(async () => {
  fx = await tokenFixture()
  dataDir = mkdtempSync(join(tmpdir(), 'ss-auth-process-'))
  agent = new Agent()
})
afterEach(async () => {
  if (!agent.destroyed) await agent.destroy()
  for (const s of servers.splice(0)) {
    if (s.child.exitCode === null) {
      s.child.kill('SIGKILL')
      await s.exited
    }
  }
  rmSync(dataDir, { recursive: true, force: true })
  fx.cleanup()
})

async function start (env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer({ DATA_DIR: dataDir, ...env })
  servers.push(server)
  return server
}

async function statusOf (url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await request(url, { headers, dispatcher: agent })
  await res.body.dump()
  return res.statusCode
}

async function waitForLine (server: ServerProcess, message: string, after: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const line = server.output.slice(after).find((l) => l.includes(`"msg":"${message}"`))
    if (line !== undefined) return JSON.parse(line) as Record<string, unknown>
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`no '${message}' log line`)
}

describe('SIGHUP', () => {
  it('reloads the token file: a new token works, live streams stay open, a broken file keeps the old tokens', async () => {
    const server = await start({ AUTH_TOKENS_FILE: fx.path })
    const base = server.baseUrl
    // A live stream, open across both reloads.
    const stream = await request(`${base}/v1/events`, { headers: bearer(fx.secrets.admin), dispatcher: agent })
    expect(stream.statusCode).toBe(200)
    let streamed = ''
    const reading = (async () => { for await (const chunk of stream.body) streamed += String(chunk) })().catch(() => {})

    const added = await addToken(fx.path, { tenant: 'acme', scopes: ['read'] })
    expect(await statusOf(`${base}/v1/sessions`, bearer(added.secret))).toBe(401)
    let mark = server.output.length
    server.child.kill('SIGHUP')
    expect(await waitForLine(server, 'tokens reloaded', mark)).toMatchObject({ file: fx.path, tokens: 6 })
    expect(await statusOf(`${base}/v1/sessions`, bearer(added.secret))).toBe(200)

    writeFileSync(fx.path, '{ broken')
    mark = server.output.length
    server.child.kill('SIGHUP')
    expect(await waitForLine(server, 'token reload failed; the previous tokens stay in force', mark)).toMatchObject({ level: 50, tokens: 6 })
    expect(await statusOf(`${base}/v1/sessions`, bearer(added.secret))).toBe(200)

    // The stream opened before both reloads still delivers.
    const created = await request(`${base}/v1/sessions`, {
      method: 'POST', headers: { ...bearer(fx.secrets.admin), 'content-type': 'application/json' }, body: JSON.stringify({ cwd: '/h', id: 'after-reload' }), dispatcher: agent,
    })
    expect(created.statusCode).toBe(201)
    await created.body.dump()
    const deadline = Date.now() + 10_000
    while (!streamed.includes('after-reload') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(streamed).toContain('event: session-created')
    expect(streamed).toContain('"id":"after-reload"')
    stream.body.destroy()
    await reading

    await agent.destroy() // idle keep-alive sockets would make the shutdown wait for its grace period
    server.child.kill('SIGTERM')
    expect((await server.exited)[0]).toBe(0)
    const logs = server.output.join('\n')
    for (const secret of [...Object.values(fx.secrets), added.secret]) expect(logs).not.toContain(secret)
  }, 60_000)
})

describe('start-up exposure check', () => {
  it('refuses a non-loopback HOST without tokens: exit 1 with a clear message', async () => {
    await expect(start({ HOST: '0.0.0.0' })).rejects.toThrow(
      /server exited with 1: session-store: HOST: 0\.0\.0\.0 is not a loopback address and AUTH_TOKENS_FILE is not set.*ALLOW_UNAUTHENTICATED=1/)
  })

  it('starts on a non-loopback HOST with ALLOW_UNAUTHENTICATED=1, open', async () => {
    const server = await start({ HOST: '0.0.0.0', ALLOW_UNAUTHENTICATED: '1' })
    const port = new URL(server.baseUrl).port
    expect(await statusOf(`http://127.0.0.1:${port}/v1/sessions`)).toBe(200)
    expect(server.output.join('\n')).toContain('"auth":"open"')
  })

  it('starts on a non-loopback HOST with AUTH_TOKENS_FILE, closed to anonymous callers', async () => {
    const server = await start({ HOST: '0.0.0.0', AUTH_TOKENS_FILE: fx.path })
    const port = new URL(server.baseUrl).port
    expect(await statusOf(`http://127.0.0.1:${port}/v1/sessions`)).toBe(401)
    expect(await statusOf(`http://127.0.0.1:${port}/v1/sessions`, bearer(fx.secrets.read))).toBe(200)
    expect(await statusOf(`http://127.0.0.1:${port}/healthz`)).toBe(200)
  })

  it('refuses a missing or broken token file rather than starting open', async () => {
    const missing = join(fx.dir, 'missing.json')
    await expect(start({ AUTH_TOKENS_FILE: missing })).rejects.toThrow(
      new RegExp(`AUTH_TOKENS_FILE: ${missing} does not exist; create the first token with: session-store token create`))
    writeFileSync(fx.path, 'nope')
    await expect(start({ AUTH_TOKENS_FILE: fx.path })).rejects.toThrow(/AUTH_TOKENS_FILE: .*token file is not valid JSON/)
  })
})
