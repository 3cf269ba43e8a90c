/**
 * Child processes of the benchmarks: the real server (`src/server.ts`, as `npm start` runs it),
 * the baselines and the load generators. Every child is stopped by its own pid, never by name,
 * and every wait is bounded in time.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { sleep } from './stats.js'

export const ROOT = join(import.meta.dirname, '..', '..')

/** A free TCP port on 127.0.0.1 (the OS picks it; it is released before returning). */
export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  await once(server, 'close')
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** Resident set size now and its peak (VmHWM), in bytes, from /proc; 0 when unavailable. */
export function memoryOf (pid: number): { rss: number, peak: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
    return { rss: kb('VmRSS'), peak: kb('VmHWM') }
  } catch {
    return { rss: 0, peak: 0 }
  }
}

/**
 * CPU time (user + system) process `pid` has used so far, all threads or, with `mainThread`, its
 * main thread alone (the task whose id is the pid), in seconds; 0 when unavailable.
 */
export function cpuSecondsOf (pid: number, mainThread = false): number {
  try {
    const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return 0
  }
}

/** A running child process with a line-oriented stdout. */
export class Child {
  readonly proc: ChildProcess
  readonly exited: Promise<unknown>
  readonly #lines: string[] = []
  readonly #waiters = new Set<() => void>()
  #stderr = ''

  /** `keepLines: false` for a child whose standard output is not piped (a server's log lines). */
  constructor (proc: ChildProcess, { keepLines = true } = {}) {
    this.proc = proc
    this.exited = once(proc, 'exit').catch(() => {})
    if (keepLines) {
      createInterface({ input: proc.stdout! }).on('line', (line) => {
        this.#lines.push(line)
        for (const wake of [...this.#waiters]) wake()
      })
    }
    proc.stderr!.on('data', (chunk: Buffer) => {
      if (this.#stderr.length < 20_000) this.#stderr += chunk.toString()
    })
  }

  get pid (): number { return this.proc.pid ?? -1 }
  get stderr (): string { return this.#stderr }
  get alive (): boolean { return this.proc.exitCode === null && this.proc.signalCode === null }
  memory (): { rss: number, peak: number } { return memoryOf(this.pid) }

  /** The first stdout line that parses as JSON and satisfies `match`, waiting at most `timeoutMs`. */
  async message<T> (match: (value: Record<string, unknown>) => boolean, timeoutMs: number): Promise<T> {
    const deadline = performance.now() + timeoutMs
    let seen = 0
    for (;;) {
      for (; seen < this.#lines.length; seen++) {
        const value = parseJson(this.#lines[seen] as string)
        if (value !== undefined && match(value)) return value as T
      }
      if (!this.alive) throw new Error(`child ${this.pid} exited: ${this.#stderr.slice(-2000)}`)
      const left = deadline - performance.now()
      if (left <= 0) throw new Error(`child ${this.pid}: no message in ${timeoutMs} ms: ${this.#stderr.slice(-2000)}`)
      await new Promise<void>((resolve) => {
        const wake = (): void => { clearTimeout(timer); this.#waiters.delete(wake); resolve() }
        const timer = setTimeout(wake, Math.min(left, 200))
        this.#waiters.add(wake)
      })
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  async stop (graceMs = 10_000): Promise<void> {
    if (!this.alive) return
    this.proc.kill('SIGTERM')
    const timer = setTimeout(() => { if (this.alive) this.proc.kill('SIGKILL') }, graceMs)
    await this.exited
    clearTimeout(timer)
  }
}

function parseJson (line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

/** Runs a TypeScript file of this repository in a new Node process (through tsx). */
export function spawnScript (file: string, args: readonly string[] = [], env: Record<string, string> = {}, nodeArgs: readonly string[] = []): Child {
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(ROOT, file), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Child(proc)
}

/** Polls `url` until it answers 200, at most `timeoutMs`; resolves the ms it took. */
export async function waitFor200 (url: string, timeoutMs: number, intervalMs = 10): Promise<number> {
  const start = performance.now()
  for (let i = 0; performance.now() - start < timeoutMs && i < 1_000_000; i++) {
    try {
      const res = await fetch(url)
      await res.arrayBuffer()
      if (res.status === 200) return performance.now() - start
    } catch {
      // not listening yet
    }
    await sleep(intervalMs)
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`)
}

/**
 * Configuration variables of the server (README "Configuration"): removed from the environment
 * of the server under test, so it runs with its defaults, as `npm ci && npm start` does.
 */
const CONFIG_VARIABLES = ['PORT', 'HOST', 'DATA_DIR', 'STORAGE', 'LOG_LEVEL', 'BODY_LIMIT', 'AUTH_TOKENS_FILE',
  'ALLOW_UNAUTHENTICATED', 'RATE_LIMIT_MAX', 'RATE_LIMIT_WINDOW_MS', 'MAX_SSE_PER_TOKEN', 'MAX_BATCH_ENTRIES',
  'MAX_EVENT_LOOP_DELAY_MS', 'CORS_ORIGINS', 'MAX_OPEN_SESSIONS', 'NODE_ENV', 'NODE_OPTIONS']

/** How the benchmarks run the server, for RESULTS.md. */
export const SERVER_UNDER_TEST = '`npm start` as shipped (`scripts/start.cjs`: a thread pool of 64, `dist/` compiled once when ' +
  'stale, then the compiled server), default settings (disk storage, `info` logging: one JSON line per request written to standard output, ' +
  'here /dev/null), only `PORT`, `HOST=127.0.0.1` and a fresh `DATA_DIR` set'

/**
 * Builds `dist/` when stale (what the first `npm start` does), so no measured start includes a
 * compile. Blocks the calling process: call it before anything is timed.
 */
export function buildOnce (): void {
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'start.cjs'), '--build-only'], { cwd: ROOT, encoding: 'utf8' })
  if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`)
}

export interface ServerHandle {
  child: Child
  baseUrl: string
  /** ms from spawn until `/readyz` answered 200. */
  readyMs: number
  stop(): Promise<void>
}

/**
 * Starts the real server as shipped (`SERVER_UNDER_TEST`) on a free port with `DATA_DIR=dataDir`
 * and waits for `/readyz`. `env` adds settings a benchmark needs (e.g. a larger BODY_LIMIT),
 * `extraNodeArgs` options of the node command line, `descriptorLimit` the soft and hard file
 * descriptor limit it runs under (a shell's `ulimit -n`, which then `exec`s node), `root` the
 * checkout whose server runs (another commit's, built, for a before-and-after).
 */
export async function startOurServer (dataDir: string, env: Record<string, string> = {}, timeoutMs = 120_000, extraNodeArgs: readonly string[] = [],
  descriptorLimit?: number, root = ROOT): Promise<ServerHandle> {
  const port = await freePort()
  const start = performance.now()
  // BENCH_SERVER_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the server.
  const nodeArgs = [...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''), ...extraNodeArgs]
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !CONFIG_VARIABLES.includes(key)))
  const argv = [process.execPath, ...nodeArgs, join(root, 'scripts', 'start.cjs')]
  const [command, args] = descriptorLimit === undefined
    ? [process.execPath, argv.slice(1)]
    : ['sh', ['-c', `ulimit -n ${descriptorLimit} && exec "$@"`, 'sh', ...argv]]
  const proc = spawn(command, args, {
    cwd: root,
    env: { ...base, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const child = new Child(proc, { keepLines: false })
  const baseUrl = `http://127.0.0.1:${port}`
  try {
    await Promise.race([
      waitFor200(`${baseUrl}/readyz`, timeoutMs, 5),
      child.exited.then(() => { throw new Error(`server exited: ${child.stderr.slice(-2000)}`) }),
    ])
  } catch (err) {
    await child.stop()
    throw err
  }
  const readyMs = performance.now() - start
  return { child, baseUrl, readyMs, stop: async () => { await child.stop() } }
}

/**
 * Starts a helper server script that prints `{"url": …}` once listening; resolves its handle.
 */
export async function startScriptServer (file: string, args: readonly string[] = [], env: Record<string, string> = {}, nodeArgs: readonly string[] = []): Promise<ServerHandle> {
  const start = performance.now()
  const child = spawnScript(file, args, env, nodeArgs)
  try {
    const { url } = await child.message<{ url: string }>((m) => typeof m.url === 'string', 120_000)
    return { child, baseUrl: url, readyMs: performance.now() - start, stop: async () => { await child.stop() } }
  } catch (err) {
    await child.stop()
    throw err
  }
}
