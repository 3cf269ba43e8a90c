/**
 * Runs the real server entry point (`src/server.ts`, compiled once per test run) in a child
 * process with plain node, the way `npm start` does, and reports the address it logs once
 * listening.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { builtServer } from './build.js'

const ROOT = join(import.meta.dirname, '..', '..')

export interface ServerProcess {
  baseUrl: string
  child: ChildProcess
  /** Every stdout line the server printed so far. */
  output: string[]
  /** Resolves with the exit code (or null when killed by a signal) and the signal. */
  exited: Promise<[number | null, NodeJS.Signals | null]>
}

/**
 * `entry`: the compiled server to run; default the test run's build (outside vitest, pass one).
 * `descriptorLimit`: the soft and hard file descriptor limit the server runs under, set by a
 * shell's `ulimit -n` that then becomes the server (`exec`), so the server's pid is the child's.
 */
export async function startServer (env: Record<string, string>, timeoutMs = 15_000, entry = builtServer(), descriptorLimit?: number): Promise<ServerProcess> {
  const [command, args] = descriptorLimit === undefined
    ? [process.execPath, [entry]]
    : ['sh', ['-c', `ulimit -n ${descriptorLimit} && exec "$0" "$1"`, process.execPath, entry]]
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const output: string[] = []
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  const lines = createInterface({ input: child.stdout! })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in ${timeoutMs} ms: ${stderr}`)), timeoutMs)
    lines.on('line', (line) => {
      output.push(line)
      const address = parseAddress(line)
      if (address !== undefined) { clearTimeout(timer); resolve(address) }
    })
    void exited.then(([code]) => { clearTimeout(timer); reject(new Error(`server exited with ${code}: ${stderr}`)) })
  })
  return { baseUrl: await listening, child, output, exited }
}

function parseAddress (line: string): string | undefined {
  try {
    const record = JSON.parse(line) as { msg?: string, address?: string }
    return record.msg === 'session-store listening' ? record.address : undefined
  } catch {
    return undefined
  }
}
