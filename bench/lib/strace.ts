/**
 * Syscall counts of a running process (`strace -f -c`), to show rather than assume that a
 * server fsyncs: how many `fdatasync`/`fsync`/`msync` calls it makes for a number of appends.
 * Optional: without strace (or without ptrace rights) the counts are `undefined`.
 */
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { sleep } from './stats.js'

export type SyscallCounts = Record<string, number>

/** True when `strace` can be run here. */
export function straceAvailable (): boolean {
  return spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0
}

/**
 * Counts the syscalls in `names` that process `pid` (all its threads) makes while `during`
 * runs. Resolves `undefined` when strace is unavailable or could not attach.
 */
export async function countSyscalls (pid: number, names: readonly string[], during: () => Promise<void>): Promise<SyscallCounts | undefined> {
  if (!straceAvailable()) { await during(); return undefined }
  const out = join(tmpdir(), `bench-strace-${process.pid}-${pid}.txt`)
  const tracer = spawn('strace', ['-f', '-c', '-e', `trace=${names.join(',')}`, '-p', String(pid), '-o', out], { stdio: 'ignore' })
  const exited = new Promise((resolve) => tracer.on('exit', resolve))
  await sleep(500) // attach to every thread first
  try {
    await during()
  } finally {
    tracer.kill('SIGINT')
    await Promise.race([exited, sleep(10_000)])
  }
  try {
    const counts: SyscallCounts = {}
    for (const line of readFileSync(out, 'utf8').split('\n')) {
      const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line)
      if (m !== null) counts[m[2] as string] = Number(m[1])
    }
    return counts
  } catch {
    return undefined
  } finally {
    rmSync(out, { force: true })
  }
}
