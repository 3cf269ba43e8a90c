/**
 * The servers of a two-server suite: two server processes (STORAGE=postgres) on one fresh
 * database, each with a DATA_DIR of its own, started before the suite's tests; every server the
 * suite started is killed, the database dropped and the directories removed after them. With
 * `proxied`, that server reaches the database through a TCP proxy (test/helpers/tcp-proxy.ts),
 * so that the network between them can be broken.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../helpers/pg.js'
import { startServer, type ServerProcess } from '../../helpers/server-process.js'
import { TcpProxy } from '../../helpers/tcp-proxy.js'

export interface TwoServers {
  readonly db: TestDatabase
  readonly a: ServerProcess
  readonly b: ServerProcess
  /** The proxy between the `proxied` server and the database. */
  readonly proxy: TcpProxy
  /** One more server on the same database, with `extra` in its environment. */
  start: (extra?: Record<string, string>) => Promise<ServerProcess>
}

export interface TwoServerOptions {
  /** The server that reaches the database through a proxy. */
  proxied?: 'a' | 'b'
  /** More of each server's environment. */
  env?: { a?: Record<string, string>, b?: Record<string, string> }
}

export function useTwoServers (options: TwoServerOptions = {}): TwoServers {
  let db: TestDatabase | undefined
  let proxy: TcpProxy | undefined
  const started: ServerProcess[] = []
  const dirs: string[] = []
  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the two servers are started before the suite\'s tests')
    return value
  }
  const servers: TwoServers = {
    get db () { return need(db) },
    get a () { return need(started[0]) },
    get b () { return need(started[1]) },
    get proxy () { return need(proxy) },
    async start (extra = {}) {
      const dir = mkdtempSync(join(tmpdir(), 'ss-pg-two-'))
      dirs.push(dir)
      const server = await startServer({ DATA_DIR: dir, STORAGE: 'postgres', DATABASE_URL: need(db).url, ...extra })
      started.push(server)
      return server
    },
  }

  beforeAll(async () => {
    db = await createTestDatabase()
    const url = new URL(db.url)
    if (options.proxied !== undefined) proxy = await TcpProxy.start(url.hostname, Number(url.port || 5432))
    for (const name of ['a', 'b'] as const) {
      await servers.start({ ...(options.proxied === name ? { DATABASE_URL: need(proxy).via(db.url) } : {}), ...options.env?.[name] })
    }
  }, 60_000)

  afterAll(async () => {
    for (const s of started) {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL')
      await s.exited
    }
    await proxy?.close()
    await db?.drop()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  return servers
}
