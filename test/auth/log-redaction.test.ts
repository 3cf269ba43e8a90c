/**
 * A token secret never reaches the logs: requests made with `Authorization: Bearer` and with
 * `?access_token=` (on streams, where it counts, and elsewhere, where it is ignored) are logged
 * at the most verbose level to a captured stream, which must not contain any secret.
 */
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { Agent, request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { redactingLogger, redactUrl } from '../../src/auth/redaction.js'
import { buildTestApp, type TestAppOverrides } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'

let fx: TokenFixture
beforeEach(async () => { fx = await tokenFixture() })
afterEach(() => { fx.cleanup() })

/** A writable that keeps everything written to it. */
function capture (): { stream: Writable, text: () => string } {
  const chunks: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { chunks.push(String(chunk)); done() } })
  return { stream, text: () => chunks.join('') }
}

/** Requests that carry secrets in every way a client may send one. */
async function traffic (app: App, agent: Agent): Promise<void> {
  const { admin, read } = fx.secrets
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const answers = [
    await app.inject({ method: 'POST', url: '/v1/sessions', headers: bearer(admin), payload: { cwd: '/logs', id: 'logged' } }),
    await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(read) }),
    await app.inject({ method: 'GET', url: '/v1/sessions', headers: { authorization: `Basic ${admin}` } }),
    await app.inject({ method: 'GET', url: `/v1/sessions?access_token=${admin}` }),
    await app.inject({ method: 'GET', url: `/v1/sessions/nope/events?access_token=${read}` }),
    await app.inject({ method: 'GET', url: `/v1/sessions/nope/events?after=0&access%5Ftoken=${read}` }),
    await app.inject({ method: 'POST', url: '/v1/tokens', headers: bearer(admin), payload: { scopes: ['read'] } }),
  ]
  expect(answers.map((a) => a.statusCode)).toEqual([201, 200, 401, 401, 404, 404, 201])
  const created = answers[6]!.json().secret as string
  await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(created) })
  const stream = await request(`${base}/v1/sessions/logged/events?access_token=${admin}`, { dispatcher: agent })
  expect(stream.statusCode).toBe(200)
  stream.body.destroy()
  const global = await request(`${base}/v1/events?access_token=${created}`, { dispatcher: agent })
  expect(global.statusCode).toBe(200)
  global.body.destroy()
  fx.secrets.read = created // checked with the others
}

function expectNoSecret (logs: string): void {
  expect(logs).toContain('request completed')
  expect(logs).toContain('access_token=[REDACTED]')
  expect(logs).toContain('access%5Ftoken=[REDACTED]')
  for (const secret of Object.values(fx.secrets)) expect(logs).not.toContain(secret)
  expect(logs).not.toContain('sst_')
}

describe('logs never contain a token secret', () => {
  /** Runs the traffic through an app logging at trace level with `logger` into `out`. */
  async function logsOf (out: ReturnType<typeof capture>, logger: NonNullable<TestAppOverrides['logger']>): Promise<string> {
    const app = await buildTestApp({ tokens: await fx.load(), logger })
    const agent = new Agent()
    try {
      await traffic(app, agent)
    } finally {
      await agent.destroy()
      await app.close()
    }
    return out.text()
  }

  it('with a ready pino logger (as the server passes one)', async () => {
    const out = capture()
    expectNoSecret(await logsOf(out, pino({ level: 'trace' }, out.stream)))
  })

  it('with Fastify logger options', async () => {
    const out = capture()
    expectNoSecret(await logsOf(out, { level: 'trace', stream: out.stream }))
  })

  it('redacts the Authorization header wherever headers are logged', () => {
    const out = capture()
    const { loggerInstance } = redactingLogger(pino({ level: 'info' }, out.stream))
    loggerInstance?.info({ headers: { authorization: 'Bearer sst_header' } }, 'headers')
    loggerInstance?.info({ request: { headers: { authorization: 'Bearer sst_nested' } } }, 'nested')
    expect(out.text()).toContain('"authorization":"[Redacted]"')
    expect(out.text()).not.toContain('sst_')
  })
})

describe('redactUrl', () => {
  it.each([
    ['/v1/events?access_token=sst_abc', '/v1/events?access_token=[REDACTED]'],
    ['/v1/events?after=1&access_token=sst_abc&blobs=ref', '/v1/events?after=1&access_token=[REDACTED]&blobs=ref'],
    ['/v1/events?ACCESS_TOKEN=sst_abc', '/v1/events?ACCESS_TOKEN=[REDACTED]'],
    ['/v1/events?access%5Ftoken=sst_abc', '/v1/events?access%5Ftoken=[REDACTED]'],
    ['/v1/events?access_token', '/v1/events?access_token=[REDACTED]'],
    ['/v1/events?access_token%zz=sst_abc', '/v1/events?access_token%zz=[REDACTED]'],
    ['/v1/sessions?cwd=%2Fx', '/v1/sessions?cwd=%2Fx'],
    ['/healthz', '/healthz'],
  ])('%s → %s', (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted)
  })
})
