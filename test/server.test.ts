/** The real process: start-up, the DATA_DIR lock, and graceful shutdown on SIGTERM. */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { builtServer } from './helpers/build.js'
import { createTestDatabase, pgAvailable } from './helpers/pg.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface Server {
  child: ChildProcess
  stdout: string[]
  stderr: string[]
  exited: Promise<number | null>
}

function startServer (env: Record<string, string>): Server {
  const child = spawn(process.execPath, [builtServer()], {
    cwd: ROOT, env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  })
  const stdout: string[] = []
  const stderr: string[] = []
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk.toString('utf8')))
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { child, stdout, stderr, exited }
}

/** The address from the `session-store listening` log line. */
async function listeningAddress (server: Server): Promise<string> {
  for (let i = 0; i < 200; i++) {
    for (const line of server.stdout.join('').split('\n')) {
      if (line.includes('"session-store listening"')) return (JSON.parse(line) as { address: string }).address
    }
    if (server.child.exitCode !== null) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`server did not start: ${server.stdout.join('')}${server.stderr.join('')}`)
}

describe('src/server.ts', () => {
  let dir: string
  const running: Server[] = []
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ss-server-')) })
  afterEach(async () => {
    for (const s of running.splice(0)) if (s.child.exitCode === null) s.child.kill('SIGKILL')
    await rm(dir, { recursive: true, force: true })
  })

  it('serves, refuses a second server on the same DATA_DIR, and stops cleanly on SIGTERM', async () => {
    const first = startServer({ DATA_DIR: dir })
    running.push(first)
    const address = await listeningAddress(first)
    const health = await request(`${address}/healthz`)
    expect(await health.body.json()).toEqual({ status: 'ok' })
    expect(existsSync(join(dir, '.lock'))).toBe(true)

    const second = startServer({ DATA_DIR: dir })
    running.push(second)
    expect(await second.exited).toBe(1)
    expect(second.stderr.join('')).toContain(`is in use by process ${first.child.pid}`)

    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)
    expect(existsSync(join(dir, '.lock'))).toBe(false)
    // The log is written asynchronously; what was buffered at exit still reaches stdout.
    const lines = first.stdout.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { msg: string, url?: string })
    expect(lines.filter((l) => l.url === '/healthz').map((l) => l.msg)).toEqual(['request completed'])
    expect(lines.slice(-2).map((l) => l.msg)).toEqual(['shutting down', 'session-store stopped'])
  })

  it('exits 0 at once on SIGTERM during start-up, while the database does not answer yet', async () => {
    // A "database" that accepts connections and never answers: start-up waits on it.
    const sockets: Socket[] = []
    const silent = createServer((socket) => sockets.push(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = silent.address() as AddressInfo
      const server = startServer({ DATA_DIR: dir, STORAGE: 'postgres', DATABASE_URL: `postgres://x:x@127.0.0.1:${port}/x` })
      running.push(server)
      while (sockets.length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
      const signalled = Date.now()
      server.child.kill('SIGTERM')
      // Without a handler the signal would kill it (code null), and as a container's PID 1 not even that.
      expect(await server.exited).toBe(0)
      expect(Date.now() - signalled).toBeLessThan(2000)
      expect(server.stdout.join('')).toContain('"signal during start-up: exiting"')
      expect(existsSync(join(dir, '.lock'))).toBe(false)
    } finally {
      for (const socket of sockets) socket.destroy()
      silent.close()
    }
  })

  it('refuses STORAGE=postgres without DATABASE_URL, naming it, with exit code 1', async () => {
    const server = startServer({ DATA_DIR: dir, STORAGE: 'postgres', DATABASE_URL: '' })
    running.push(server)
    expect(await server.exited).toBe(1)
    expect(server.stderr.join('')).toContain('DATABASE_URL: required with STORAGE=postgres')
  })

  it.runIf(pgAvailable)('with STORAGE=postgres keeps sessions in the database: a restart on an empty DATA_DIR serves them', async () => {
    const db = await createTestDatabase()
    try {
      const first = startServer({ DATA_DIR: dir, STORAGE: 'postgres', DATABASE_URL: db.url })
      running.push(first)
      const address = await listeningAddress(first)
      const created = await request(`${address}/v1/sessions`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cwd: '/work/p' }),
      })
      const { id } = (await created.body.json() as { header: { id: string } }).header
      const appended = await request(`${address}/v1/sessions/${id}/entries`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ entries: [{ type: 'message', message: { role: 'user', content: 'hello' } }, { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] } }] }),
      })
      expect(appended.statusCode).toBe(201)
      expect(await appended.body.json()).toMatchObject({ persisted: true })
      const exported = await (await request(`${address}/v1/sessions/${id}/export`)).body.text()
      first.child.kill('SIGTERM')
      expect(await first.exited).toBe(0)

      const empty = await mkdtemp(join(tmpdir(), 'ss-server-'))
      try {
        const second = startServer({ DATA_DIR: empty, STORAGE: 'postgres', DATABASE_URL: db.url })
        running.push(second)
        const again = await listeningAddress(second)
        expect(exported.split('\n')).toHaveLength(4)
        expect(await (await request(`${again}/v1/sessions/${id}/export`)).body.text()).toBe(exported)
        second.child.kill('SIGTERM')
        expect(await second.exited).toBe(0)
      } finally {
        await rm(empty, { recursive: true, force: true })
      }
    } finally {
      await db.drop()
    }
  }, 90_000) // two server processes start one after the other
})
