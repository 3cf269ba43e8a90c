/**
 * Regression tests for what withstood attack: request smuggling is refused before routing,
 * path parameters never reach the file system as paths, and a tenant's files stay below its
 * DATA_DIR whatever ids and cwds a client sends.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildDiskTestApp } from '../helpers/app.js'
import { problemOf } from '../helpers/problem.js'

let app: App
let root: string
let dataDir: string
let port: number
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ss-hostile-'))
  dataDir = join(root, 'data')
  app = await buildDiskTestApp(dataDir)
  port = Number(new URL(await app.listen({ host: '127.0.0.1', port: 0 })).port)
})
afterAll(async () => {
  await app.close()
  await rm(root, { recursive: true, force: true })
})

/** Sends raw bytes and returns every status line the server answered with. */
async function statuses (request: string): Promise<number[]> {
  const text = await new Promise<string>((resolve) => {
    let out = ''
    const socket = net.connect(port, '127.0.0.1', () => socket.end(request))
    socket.on('data', (d) => { out += d.toString() }).on('close', () => resolve(out)).on('error', () => resolve(out))
  })
  return [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]))
}

const SMUGGLED = 'POST /v1/sessions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 22\r\n\r\n{"cwd":"/smuggled-in"}'

async function smuggledSessions (): Promise<number> {
  const res = await app.inject({ method: 'GET', url: '/v1/sessions?cwd=%2Fsmuggled-in&includeEmpty=true' })
  const recent = await app.inject({ method: 'GET', url: '/v1/sessions/recent?cwd=%2Fsmuggled-in' })
  return (res.json().sessions as unknown[]).length + (recent.json().sessions as unknown[]).length
}

describe('request smuggling', () => {
  it.each([
    ['Content-Length with Transfer-Encoding', `POST /v1/blobs HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`],
    ['two different Content-Lengths', `POST /v1/blobs HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nContent-Length: 148\r\n\r\n${SMUGGLED}`],
    ['an obfuscated Transfer-Encoding', `POST /v1/blobs HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n${SMUGGLED}`],
    ['a chunked encoding that is not last', `POST /v1/blobs HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n${SMUGGLED}`],
    ['a bare LF in a chunk size line', `POST /v1/blobs HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n0\n\r\n${SMUGGLED}`],
  ])('%s is refused with 400 and the request hidden behind it never runs', async (_, request) => {
    const answered = await statuses(request)
    expect(answered[0]).toBe(400)
    expect(answered).not.toContain(201)
    expect(await smuggledSessions()).toBe(0)
  })
})

describe('path handling', () => {
  // An id is a key of the session index, never a path: these are ids no session has. `%2E%2E`
  // is `..` once decoded, which leaves /v1/sessions/ and so names no route.
  it.each([
    ['/v1/sessions/..%2F..%2Fetc%2Fpasswd', 'SS_SESSION_NOT_FOUND'],
    ['/v1/sessions/%2E%2E', 'SS_NOT_FOUND'],
    ['/v1/sessions/a%00b', 'SS_SESSION_NOT_FOUND'],
    ['/v1/sessions/.hidden', 'SS_SESSION_NOT_FOUND'],
    [`/v1/sessions/${'a'.repeat(129)}`, 'SS_SESSION_NOT_FOUND'],
  ])('GET %s is 404 %s and touches no file outside DATA_DIR', async (url, code) => {
    const res = await app.inject({ method: 'GET', url })
    expect(problemOf(res)).toEqual({ status: 404, code })
  })

  it('a client-chosen id or cwd full of dots and slashes stays a name below DATA_DIR/sessions', async () => {
    const bad = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/x', id: '../../escape' } })
    expect(problemOf(bad)).toEqual({ status: 400, code: 'SS_VALIDATION' })
    // A cwd is used verbatim and only named by its directory: dots and slashes are allowed in it.
    const dotted = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/../../../tmp/escape' } })
    expect(dotted.statusCode).toBe(201)
    const saved = await app.inject({
      method: 'POST',
      url: `/v1/sessions/${dotted.json().header.id as string}/entries`,
      payload: { entries: [{ type: 'message', message: { role: 'user', content: 'u', timestamp: 1 } }, { type: 'message', message: { role: 'assistant', content: [], provider: 'p', model: 'm', timestamp: 2 } }] },
    })
    expect(saved.json().persisted).toBe(true)
    expect(await readdir(root)).toEqual(['data'])
    for (const dir of await readdir(join(dataDir, 'sessions'))) expect(dir).not.toContain('/')
  })
})
