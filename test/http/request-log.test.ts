/**
 * One log line per request, written when the answer is complete, with what an operator needs to
 * follow it: method, URL (secrets redacted), status, duration and the request id that ties it to
 * any other line the request logged.
 */
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { Agent, request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { logCompleted, requestLogger } from '../../src/http/request-log.js'
import { buildTestApp } from '../helpers/app.js'
import { problemOf } from '../helpers/problem.js'

interface Line { level: number, msg: string, reqId?: string, [key: string]: unknown }

let app: App | undefined
afterEach(async () => { await app?.close() })

async function appLogging (level: string): Promise<{ app: App, lines: () => Line[] }> {
  const chunks: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { chunks.push(String(chunk)); done() } })
  app = await buildTestApp({ logger: pino({ level }, stream) })
  const lines = (): Line[] => chunks.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line)
  return { app, lines }
}

describe('request logging', () => {
  it('writes exactly one line per request, with method, url, status, duration and request id', async () => {
    const { app, lines } = await appLogging('info')
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/logs', id: 'one-line' } })
    expect(created.statusCode).toBe(201)
    const missing = await app.inject({ method: 'GET', url: '/v1/sessions/nope?access_token=sst_secret' })
    expect(problemOf(missing)).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })

    const requests = lines().filter((l) => l.reqId !== undefined)
    const ids = new Set(requests.map((l) => l.reqId))
    expect(ids.size).toBe(2)
    const completed = requests.filter((l) => l.msg === 'request completed')
    expect(completed).toHaveLength(2)
    expect(requests.some((l) => l.msg === 'incoming request')).toBe(false)
    expect(completed[0]).toMatchObject({ level: 30, method: 'POST', url: '/v1/sessions', statusCode: 201, remoteAddress: '127.0.0.1' })
    expect(completed[1]).toMatchObject({ method: 'GET', url: '/v1/sessions/nope?access_token=[REDACTED]', statusCode: 404 })
    for (const line of completed) expect(line.responseTime).toEqual(expect.any(Number))
    expect(JSON.stringify(lines())).not.toContain('sst_secret')
  })

  it('writes one line for a live stream, when the client leaves it and when the server ends it', async () => {
    const { app: server, lines } = await appLogging('info')
    await server.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/logs', id: 'streamed' } })
    const base = await server.listen({ port: 0, host: '127.0.0.1' })
    const agent = new Agent()
    try {
      const left = await request(`${base}/v1/sessions/streamed/events?after=0`, { dispatcher: agent })
      expect(left.statusCode).toBe(200)
      left.body.destroy()
      const ended = await request(`${base}/v1/events`, { dispatcher: agent })
      expect(ended.statusCode).toBe(200)
      for (let i = 0; i < 100 && !lines().some((l) => l.url === '/v1/sessions/streamed/events?after=0'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await server.close() // ends the global stream
      app = undefined
      await ended.body.dump()
    } finally {
      await agent.destroy()
    }
    const streamLines = (url: string): Line[] => lines().filter((l) => l.url === url)
    expect(streamLines('/v1/sessions/streamed/events?after=0')).toMatchObject([{ msg: 'request completed', method: 'GET', statusCode: 200 }])
    expect(streamLines('/v1/events')).toMatchObject([{ msg: 'request completed', method: 'GET', statusCode: 200 }])
  })

  it('writes nothing per request above info', async () => {
    const { app, lines } = await appLogging('warn')
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    expect(lines()).toEqual([])
  })

  it('writes a request\'s lines as its pino child would, and makes the child only when the request logs', async () => {
    const chunks: string[] = []
    const stream = new Writable({ write (chunk, _enc, done) { chunks.push(String(chunk)); done() } })
    const root = pino({ level: 'info', timestamp: false }, stream)
    const bindings = { reqId: 'req-7' }
    const fields = { method: 'POST', url: '/v1/x', statusCode: 201, responseTime: 1.5, remoteAddress: '127.0.0.1' }
    const request = { method: 'POST', url: '/v1/x', ip: '127.0.0.1' } as unknown as Parameters<typeof logCompleted>[0]
    const replyWith = (log: unknown) => ({ log, raw: { statusCode: 201 }, elapsedTime: 1.5 }) as unknown as Parameters<typeof logCompleted>[1]

    root.child(bindings).info(fields, 'request completed')
    const lazy = requestLogger.call(undefined as never, root, bindings, {}, undefined as never)
    logCompleted(request, replyWith(lazy))
    expect(chunks).toHaveLength(2)
    expect(chunks[1]).toBe(chunks[0])

    // A request that logs its own line gets its child, and every later line comes from it.
    lazy.warn({ detail: 'x' }, 'own line')
    logCompleted(request, replyWith(lazy))
    expect(JSON.parse(chunks[2]!)).toMatchObject({ level: 40, reqId: 'req-7', detail: 'x', msg: 'own line' })
    expect(chunks[3]).toBe(chunks[0])
    expect(lazy.level).toBe('info')

    // Route options (a level of its own) make the child at once, with them.
    const quiet = requestLogger.call(undefined as never, root, bindings, { level: 'warn' }, undefined as never)
    expect(quiet.level).toBe('warn')
    quiet.info('dropped')
    expect(chunks).toHaveLength(4)
  })
})
