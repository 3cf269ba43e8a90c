/**
 * Runs the CLI the way a user does: the compiled `src/cli/main.ts` (the test run's one build,
 * as the installed `session-store` runs dist/) in a child process, with its own stdout, stderr
 * and exit code.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import type { Io, Output } from '../../src/cli/args.js'
import { builtCli } from '../helpers/build.js'

export const ROOT = join(import.meta.dirname, '..', '..')
export const FIXTURES = join(import.meta.dirname, '..', 'fixtures')

export interface CliRun {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>
}

/** Starts `session-store <args>`; the environment is the test's plus `env`. */
export function startCli (args: string[], options: { env?: Record<string, string>, cwd?: string } = {}): CliRun {
  const child = spawn(process.execPath, [builtCli(), ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout!.on('data', (chunk: Buffer) => out.push(chunk))
  child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
  const exited = once(child, 'close').then(([code]) => code as number | null)
  return { child, stdout: () => Buffer.concat(out).toString('utf8'), stderr: () => Buffer.concat(err).toString('utf8'), exited }
}

/** Runs `session-store <args>` to the end. */
export async function cli (args: string[], options: { env?: Record<string, string>, cwd?: string } = {}): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const run = startCli(args, options)
  const code = await run.exited
  return { code, stdout: run.stdout(), stderr: run.stderr() }
}

export { waitUntil } from '../helpers/wait.js'

export { freePort } from '../helpers/free-port.js'

/** An `Io` over strings, for running `runCli` in this process. */
export function memoryIo (env: Record<string, string | undefined> = {}, cwd = ROOT, tty = false, signal = new AbortController().signal): { io: Io, stdout: () => string, stderr: () => string } {
  const sink = (chunks: string[]): Output => ({
    write (chunk) { chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')); return true },
    once () { return undefined },
    isTTY: tty,
    columns: 60,
  })
  const out: string[] = []
  const err: string[] = []
  const io: Io = { stdout: sink(out), stderr: sink(err), env, cwd, signal }
  return { io, stdout: () => out.join(''), stderr: () => err.join('') }
}
