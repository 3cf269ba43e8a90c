/**
 * `session-store tail <id> --server <url>`: stored entries, then live appends, one compact JSON
 * line each; `--after`; resumes across a server restart; ends on deletion or Ctrl-C.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from '../helpers/server-process.js'
import { cli, freePort, startCli, waitUntil, type CliRun } from './helpers.js'

const dataDir = mkdtempSync(join(tmpdir(), 'ss-cli-tail-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

async function call (base: string, method: 'POST' | 'DELETE' | 'GET', path: string, body?: unknown): Promise<any> {
  const res = await request(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.body.text()
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`)
  return text === '' ? undefined : JSON.parse(text)
}

const user = (text: string): unknown => ({ type: 'message', message: { role: 'user', content: text } })
const assistant = (text: string): unknown => ({
  type: 'message', message: { role: 'assistant', content: [{ type: 'text', text }], provider: 'openai', model: 'gpt-4o' },
})

/** A session with `n` stored entries (persisted: the second is an assistant message). */
async function session (base: string, id: string, n: number): Promise<void> {
  await call(base, 'POST', '/v1/sessions', { cwd: '/tail', id })
  const entries = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? user(`q${i + 1}`) : assistant(`a${i + 1}`)))
  if (n > 0) await call(base, 'POST', `/v1/sessions/${id}/entries`, { entries })
}

async function storedEntries (base: string, id: string): Promise<unknown[]> {
  return (await call(base, 'GET', `/v1/sessions/${id}/entries?limit=1000`)).entries
}

const lines = (run: CliRun): string[] => run.stdout().split('\n').filter((l) => l !== '')

describe('session-store tail', () => {
  let server: ServerProcess
  const runs: CliRun[] = []
  beforeAll(async () => { server = await startServer({ DATA_DIR: dataDir }) })
  afterEach(() => { for (const run of runs.splice(0)) if (run.child.exitCode === null) run.child.kill('SIGKILL') })
  afterAll(async () => {
    server.child.kill('SIGTERM')
    await server.exited
  })

  it('prints stored then appended entries, one compact JSON line each, and exits 0 when the session is deleted', async () => {
    await session(server.baseUrl, 'tail-live', 2)
    const run = startCli(['tail', 'tail-live', '--server', server.baseUrl])
    runs.push(run)
    await waitUntil(() => lines(run).length >= 2, 'the 2 stored entries')
    await call(server.baseUrl, 'POST', '/v1/sessions/tail-live/entries', { entries: [user('q3'), assistant('a4')] })
    await call(server.baseUrl, 'POST', '/v1/sessions/tail-live/entries', user('q5'))
    await waitUntil(() => lines(run).length >= 5, 'the 3 appended entries')
    const printed = lines(run)
    for (const line of printed) expect(line).toBe(JSON.stringify(JSON.parse(line)))
    expect(printed.map((l) => JSON.parse(l))).toEqual(await storedEntries(server.baseUrl, 'tail-live'))

    await call(server.baseUrl, 'DELETE', '/v1/sessions/tail-live')
    expect(await run.exited).toBe(0)
    expect(run.stderr()).toBe('session tail-live was deleted\n')
    expect(lines(run)).toHaveLength(5)
  })

  it('--after <seq> starts after that entry', async () => {
    await session(server.baseUrl, 'tail-after', 4)
    const run = startCli(['tail', 'tail-after', '--server', server.baseUrl, '--after', '2'])
    runs.push(run)
    await waitUntil(() => lines(run).length >= 2, 'entries 3 and 4')
    await call(server.baseUrl, 'POST', '/v1/sessions/tail-after/entries', user('q5'))
    await waitUntil(() => lines(run).length >= 3, 'entry 5')
    expect(lines(run).map((l) => JSON.parse(l))).toEqual((await storedEntries(server.baseUrl, 'tail-after')).slice(2))
    run.child.kill('SIGINT') // Ctrl-C ends the tail normally
    expect(await run.exited).toBe(0)
    expect(lines(run)).toHaveLength(3)
  })

  it('fails (exit 1) for an unknown session', async () => {
    const res = await cli(['tail', 'no-such-session', '--server', server.baseUrl])
    expect(res.code).toBe(1)
    expect(res.stderr).toBe("session-store: Session 'no-such-session' not found (HTTP 404 SS_SESSION_NOT_FOUND)\n")
  })
})

describe('session-store tail across a server restart', () => {
  it('resumes after the last printed entry: nothing missed, nothing repeated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ss-cli-tail-restart-'))
    const port = String(await freePort())
    let server = await startServer({ DATA_DIR: dir, PORT: port })
    await session(server.baseUrl, 'tail-restart', 2)
    const run = startCli(['tail', 'tail-restart', '--server', server.baseUrl])
    try {
      await waitUntil(() => lines(run).length >= 2, 'the 2 stored entries')
      server.child.kill('SIGTERM')
      expect((await server.exited)[0]).toBe(0)
      server = await startServer({ DATA_DIR: dir, PORT: port })
      await call(server.baseUrl, 'POST', '/v1/sessions/tail-restart/entries', { entries: [user('q3'), assistant('a4')] })
      await waitUntil(() => lines(run).length >= 4, 'the entries appended after the restart')
      expect(lines(run).map((l) => JSON.parse(l))).toEqual(await storedEntries(server.baseUrl, 'tail-restart'))
      run.child.kill('SIGTERM')
      expect(await run.exited).toBe(0)
      expect(run.stderr()).toBe('')
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL')
      server.child.kill('SIGTERM')
      await server.exited
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
