/**
 * `session-store sync`: pi's and oh-my-pi's layouts, `--once` with its summary, following a
 * directory (appends, rewrites, new and deleted files, `--delete`), the agent's blobs, and a
 * server that is unreachable or answers 503 and 429 for a while.
 */
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/free-port.js'
import { cli, startCli, type CliRun } from './helpers.js'
import {
  agentDir, append, assistant, eventually, exported, header, image, lines, listeningApp, titleLine, user, writeSession, type AgentDir,
} from './agent-dir.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c() })

async function setup (): Promise<{ dir: AgentDir, server: Awaited<ReturnType<typeof listeningApp>> }> {
  const dir = agentDir()
  const server = await listeningApp()
  cleanups.push(dir.cleanup, server.stop)
  return { dir, server }
}

function follow (args: string[]): CliRun {
  const run = startCli(['sync', ...args, '--interval', '100'])
  cleanups.push(async () => { run.child.kill('SIGKILL'); await run.exited })
  return run
}

describe('sync --once', () => {
  it("copies pi's and oh-my-pi's layouts byte for byte, with the agent's blobs, and reports each session", async () => {
    const { dir, server } = await setup()
    const img = image(3)
    writeFileSync(join(dir.blobs, img.hash), Buffer.from(img.data, 'base64'))
    const pi = writeSession(dir, '--work-demo--', 'pi-1', lines(header('pi-1'), user('a1', null), assistant('b2', 'a1')))
    const withRef = user('a1', null, [{ type: 'text', text: 'see' }, { type: 'image', data: `blob:sha256:${img.hash}`, mimeType: 'image/png' }])
    const omp = writeSession(dir, '-proj', 'omp-1', titleLine('Upload triage') + lines(header('omp-1', '/home/u/proj'), withRef, assistant('b2', 'a1')))
    writeFileSync(join(dir.sessions, '-proj', 'notes.txt'), 'not a session')

    const first = await cli(['sync', dir.sessions, '--server', server.url, '--once'])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toBe('--work-demo--/2026-03-14T15-04-07-123Z_pi-1.jsonl: imported (pi-1)\n' +
      '-proj/2026-03-14T15-04-07-123Z_omp-1.jsonl: imported (omp-1)\n' +
      'synced 2 sessions: 2 imported, 0 updated, 0 unchanged\n')
    for (const [id, path] of [['pi-1', pi], ['omp-1', omp]] as const) {
      expect(await exported(server.app, id)).toBe((await import('node:fs')).readFileSync(path, 'utf8'))
    }
    const session = (await server.app.inject({ method: 'GET', url: '/v1/sessions/omp-1' })).json()
    expect(session.header.title).toBe('Upload triage')
    const blob = await server.app.inject({ method: 'GET', url: `/v1/blobs/sha256/${img.hash}` })
    expect(blob.statusCode).toBe(200)
    const entry = (await server.app.inject({ method: 'GET', url: '/v1/sessions/omp-1/entries/a1' })).json()
    expect(entry.message.content[1].data).toBe(img.data)

    append(pi, user('c3', 'b2'))
    const second = await cli(['sync', dir.sessions, '--server', server.url, '--once'])
    expect(second.stdout).toContain('--work-demo--/2026-03-14T15-04-07-123Z_pi-1.jsonl: appended 1 entry (pi-1)\n')
    expect(second.stdout).toContain('synced 2 sessions: 0 imported, 1 updated, 1 unchanged\n')
  })

  it('refuses a missing directory and a missing --server', async () => {
    expect((await cli(['sync', '/nonexistent-dir-x', '--server', 'http://127.0.0.1:1', '--once'])).code).toBe(1)
    expect((await cli(['sync', '/tmp'])).code).toBe(2)
  })
})

describe('sync, following a directory', () => {
  it('sends lines as they are written, a rewritten file whole, new files, and forgets deleted ones', async () => {
    const { dir, server } = await setup()
    const path = writeSession(dir, '--work-demo--', 's1', lines(header('s1'), user('a1', null), assistant('b2', 'a1')))
    const run = follow([dir.sessions, '--server', server.url])
    const matches = (id: string, file: string) => async () => await exported(server.app, id) === (await import('node:fs')).readFileSync(file, 'utf8')
    await eventually(matches('s1', path), 'the first import')
    // A line written in two pieces: nothing of it goes before it is whole.
    const next = JSON.stringify(user('c3', 'b2')) + '\n'
    writeFileSync(path, next.slice(0, 20), { flag: 'a' })
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect((await server.app.inject({ method: 'GET', url: '/v1/sessions/s1' })).json().entryCount).toBe(2)
    writeFileSync(path, next.slice(20), { flag: 'a' })
    await eventually(matches('s1', path), 'the appended line')
    // The agent rewrites its file (a title, atomically): the session becomes what it says.
    const text = (await import('node:fs')).readFileSync(path, 'utf8').replace('"cwd":"/work/demo"}', '"cwd":"/work/demo","title":"Renamed"}')
    writeFileSync(path + '.tmp', text)
    renameSync(path + '.tmp', path)
    await eventually(matches('s1', path), 'the rewritten file')
    expect((await server.app.inject({ method: 'GET', url: '/v1/sessions/s1' })).json().header.title).toBe('Renamed')
    const other = writeSession(dir, '-proj', 's2', lines(header('s2'), user('x1', null)))
    await eventually(matches('s2', other), 'a new file')
    rmSync(other)
    await eventually(async () => run.stderr().includes('"sessionId":"s2"') && run.stderr().includes('stopped following session'), 'the log of s2 leaving')
    expect(await exported(server.app, 's2')).toBeDefined()
    const log = run.stderr().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { msg: string, sessionId?: string })
    expect(log.filter((l) => l.msg === 'following session').map((l) => l.sessionId)).toEqual(['s1', 's2'])
  })

  it('with --delete, deletes the session of a deleted file', async () => {
    const { dir, server } = await setup()
    const path = writeSession(dir, '--work-demo--', 'gone', lines(header('gone'), user('a1', null)))
    follow([dir.sessions, '--server', server.url, '--delete'])
    await eventually(async () => await exported(server.app, 'gone') !== undefined, 'the import')
    rmSync(path)
    await eventually(async () => await exported(server.app, 'gone') === undefined, 'the deletion')
  })

  it('waits for an unreachable server, and through 503 and 429 answers, then catches up', async () => {
    const dir = agentDir()
    cleanups.push(dir.cleanup)
    const path = writeSession(dir, '--work-demo--', 'late', lines(header('late'), user('a1', null)))
    const port = await freePort()
    const run = follow([dir.sessions, '--server', `http://127.0.0.1:${port}`])
    await eventually(async () => run.stderr().includes('server unavailable'), 'the first wait', 10_000)
    // Then a server that answers 503 and 429 to its first requests.
    const server = await listeningApp()
    cleanups.push(server.stop)
    const refusals = [503, 429, 503]
    const front = await refusingProxy(port, server.url, refusals)
    cleanups.push(() => { front.close() })
    append(path, assistant('b2', 'a1'))
    await eventually(async () => await exported(server.app, 'late') === (await import('node:fs')).readFileSync(path, 'utf8'), 'the catch-up', 20_000)
    expect(refusals).toEqual([])
  })
})

/** Listens on `port`: answers the statuses of `refusals` (taking them) first, then passes requests to `target`. */
async function refusingProxy (port: number, target: string, refusals: number[]): Promise<Server> {
  const server = createServer((req, res) => {
    const status = refusals.shift()
    if (status !== undefined) {
      res.writeHead(status, { 'content-type': 'application/problem+json', 'retry-after': '1' })
      res.end(JSON.stringify({ type: 'about:blank', title: 'busy', status, code: status === 429 ? 'SS_RATE_LIMITED' : 'SS_NOT_READY' }))
      return
    }
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection' && k !== 'content-length')) as Record<string, string>
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks)
      fetch(`${target}${req.url ?? '/'}`, { method: req.method, headers, body }).then(async (answer) => {
        res.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([k]) => k !== 'content-encoding' && k !== 'transfer-encoding' && k !== 'content-length')))
        res.end(Buffer.from(await answer.arrayBuffer()))
      }, () => { res.destroy() })
    })
  })
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  return server
}
