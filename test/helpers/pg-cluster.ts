/**
 * A PostgreSQL server of one test's own: a fresh cluster (`initdb`) in a temp directory on a
 * free port, which the test may stop and start again, as a database restart, without touching
 * the server every other test file shares. Run with the installed server's programs
 * (`pg_config --bindir`); as root they run as the `postgres` user, since PostgreSQL refuses to
 * run as root.
 */
import { execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.js'

/** The directory of `initdb` and `pg_ctl`, or undefined when no server is installed. */
function serverBinaries (): string | undefined {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim()
    return existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')) ? dir : undefined
  } catch {
    return undefined
  }
}

const BIN = serverBinaries()
const AS_ROOT = process.getuid?.() === 0

/** The programs to start a cluster are installed (and, as root, the `postgres` user to run them). */
export const clusterAvailable: boolean = BIN !== undefined && (!AS_ROOT || hasUser('postgres'))

function hasUser (name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

export class PgCluster {
  readonly url: string
  readonly #dir: string
  readonly #port: number

  private constructor (dir: string, port: number) {
    this.#dir = dir
    this.#port = port
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`
  }

  /** Creates the cluster and starts it. */
  static async create (): Promise<PgCluster> {
    if (BIN === undefined) throw new Error('no PostgreSQL server installed (pg_config --bindir)')
    const dir = mkdtempSync(join(tmpdir(), 'ss-pg-cluster-'))
    if (AS_ROOT) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }))
      chownSync(dir, uid, gid)
    }
    const cluster = new PgCluster(dir, await freePort())
    cluster.#run('initdb', ['-D', cluster.#data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
    cluster.start()
    return cluster
  }

  get #data (): string { return join(this.#dir, 'data') }

  /** Starts the server and waits until it accepts connections. */
  start (): void {
    const options = `-p ${this.#port} -k ${this.#dir} -c listen_addresses=127.0.0.1 -c fsync=off`
    this.#run('pg_ctl', ['-D', this.#data, '-l', join(this.#dir, 'server.log'), '-o', options, '-w', 'start'])
  }

  /** Stops the server the way a restart does (`-m fast`: sessions are ended, work is rolled back). */
  stop (): void {
    this.#run('pg_ctl', ['-D', this.#data, '-m', 'fast', '-w', 'stop'])
  }

  /** The server's log, for a failing test's message. */
  log (): string {
    try {
      return readFileSync(join(this.#dir, 'server.log'), 'utf8')
    } catch {
      return ''
    }
  }

  /** Stops the server if it runs and removes the cluster. */
  destroy (): void {
    try {
      this.#run('pg_ctl', ['-D', this.#data, '-m', 'immediate', '-w', 'stop'])
    } catch {
      // not running
    }
    rmSync(this.#dir, { recursive: true, force: true })
  }

  #run (program: string, args: string[]): void {
    const path = join(BIN as string, program)
    const [file, argv] = AS_ROOT ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args]
    execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: this.#dir, timeout: 60_000 })
  }
}
