/**
 * Plain Node `fs` appends, no HTTP: `files` files in a fresh directory under `dir`, one append in
 * flight on each, each append `fs.write` of one line of `bytes` bytes (O_APPEND) and then
 * `fs.fdatasync` of that file, with callbacks, for `durationS` seconds. Prints
 * `{"fsAppends": {...}}`: appends completed per second, latency percentiles (write start to
 * fdatasync end) and the CPU this process used per second (all threads), in cores.
 * Spawned by `fs-append.ts` with `--require scripts/start.cjs`, so its thread pool is sized as
 * `npm start` sizes the server's.
 * Usage: node --require scripts/start.cjs --import tsx bench/lib/fs-append-worker.ts <dir> <files> <bytes> <durationS>
 */
import fs from 'node:fs'
import { join } from 'node:path'
import { percentileSorted } from './stats.js'

const [dir, filesArg, bytesArg, durationArg] = process.argv.slice(2) as [string, string, string, string]
const files = Number(filesArg)
const line = Buffer.alloc(Number(bytesArg), 'x')
line[line.length - 1] = 0x0a
const root = fs.mkdtempSync(join(dir, 'bench-fs-append-'))
const fds = Array.from({ length: files }, (_, i) => fs.openSync(join(root, `${i}.jsonl`), 'a'))
const latencies: number[] = []
const cpu0 = process.cpuUsage()
const start = performance.now()
const end = start + Number(durationArg) * 1000
let running = files

function fail (err: Error): never {
  process.stderr.write(`${err.stack ?? String(err)}\n`)
  process.exit(1)
}

function finish (): void {
  const elapsed = (performance.now() - start) / 1000
  const cpu = process.cpuUsage(cpu0)
  for (const fd of fds) fs.closeSync(fd)
  fs.rmSync(root, { recursive: true, force: true })
  latencies.sort((a, b) => a - b)
  process.stdout.write(JSON.stringify({
    fsAppends: {
      perS: latencies.length / elapsed,
      p50: percentileSorted(latencies, 50),
      p99: percentileSorted(latencies, 99),
      cores: (cpu.user + cpu.system) / 1e6 / elapsed,
      durationS: elapsed,
      threadPool: process.env.UV_THREADPOOL_SIZE ?? '4',
    },
  }) + '\n')
}

function append (fd: number): void {
  const t0 = performance.now()
  if (t0 >= end) {
    if (--running === 0) finish()
    return
  }
  fs.write(fd, line, 0, line.length, null, (err, written) => {
    if (err !== null) fail(err)
    if (written !== line.length) fail(new Error(`short write: ${written} of ${line.length} bytes`))
    fs.fdatasync(fd, (err) => {
      if (err !== null) fail(err)
      latencies.push(performance.now() - t0)
      append(fd)
    })
  })
}

for (const fd of fds) append(fd)
