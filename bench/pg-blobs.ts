/**
 * Memory of reading a 60 MiB blob from PostgreSQL (src/storage/postgres/pg-blob-store.ts):
 * `open` + streaming it to a sink (slices of 1 MiB, one statement each) against `get` (the whole
 * value at once), as the growth of the process's resident set over its level before the read,
 * sampled every 5 ms, plus the time each took. Incompressible bytes, as images are. Each way
 * runs in a child process of its own, so one does not leave memory behind for the other. RSS
 * counts garbage not yet collected too, so the bound is shown directly as well: each way once
 * more with the V8 old space capped at 40 MiB, below the blob's size.
 * Run: `npx tsx bench/pg-blobs.ts` (PostgreSQL at `BENCH_DATABASE_URL`, default 127.0.0.1);
 * the table goes to stdout.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { migrate } from '../src/storage/postgres/migrate.js'
import { PgBlobStore } from '../src/storage/postgres/pg-blob-store.js'
import { createPool } from '../src/storage/postgres/pool.js'
import { withDatabase } from './lib/pg-database.js'

const SIZE = 60 * 1024 * 1024
const MIB = 1024 * 1024
/** Old-space limit of the capped runs, below the blob's size. */
const CAP_MIB = 40

interface Sample { way: string, peakGrowthMiB: number, ms: number }

/** In a child: reads blob `hash` of `url` the way `way` says and prints a Sample as JSON. */
async function child (url: string, hash: string, way: 'stream' | 'get'): Promise<void> {
  const pool = createPool(url, { max: 2, statementTimeoutMs: 120_000 })
  const store = new PgBlobStore(pool, 'bench')
  await store.has(hash) // connect first: the connection is not what is measured
  global.gc?.()
  const base = process.memoryUsage().rss
  let peak = base
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 5)
  const start = performance.now()
  if (way === 'stream') {
    const reader = await store.open(hash)
    let seen = 0
    await pipeline(reader!.stream(), new Writable({ write (chunk: Buffer, _e, cb) { seen += chunk.length; peak = Math.max(peak, process.memoryUsage().rss); cb() } }))
    if (seen !== SIZE) throw new Error(`streamed ${seen} bytes`)
  } else {
    const bytes = await store.get(hash)
    peak = Math.max(peak, process.memoryUsage().rss)
    if (bytes?.length !== SIZE) throw new Error('short get')
  }
  const ms = performance.now() - start
  clearInterval(timer)
  await pool.end()
  const sample: Sample = { way, peakGrowthMiB: (peak - base) / MIB, ms }
  process.stdout.write(JSON.stringify(sample) + '\n')
}

async function main (): Promise<void> {
  const [mode, url, hash, way] = process.argv.slice(2)
  if (mode === '--child') return await child(url!, hash!, way as 'stream' | 'get')
  await withDatabase(async (dbUrl) => {
    const pool = createPool(dbUrl, { max: 2, statementTimeoutMs: 120_000 })
    await migrate(pool)
    const { hash: stored } = await new PgBlobStore(pool, 'bench').put(randomBytes(SIZE))
    await pool.end()
    const rows: Sample[] = []
    for (let round = 0; round < 3; round++) {
      for (const w of ['stream', 'get']) {
        const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', import.meta.filename, '--child', dbUrl, stored, w], { encoding: 'utf8' })
        if (run.status !== 0) throw new Error(run.stderr)
        rows.push(JSON.parse(run.stdout) as Sample)
      }
    }
    process.stdout.write('| way | peak RSS growth MiB | ms |\n|---|---:|---:|\n')
    for (const r of rows) process.stdout.write(`| ${r.way} | ${r.peakGrowthMiB.toFixed(1)} | ${r.ms.toFixed(0)} |\n`)
    // The bound itself: with a V8 heap capped below the blob's size, only the stream finishes.
    process.stdout.write(`\n| way, heap capped at ${CAP_MIB} MiB | result |\n|---|---|\n`)
    for (const w of ['stream', 'get']) {
      const run = spawnSync(process.execPath, [`--max-old-space-size=${CAP_MIB}`, '--import', 'tsx', import.meta.filename, '--child', dbUrl, stored, w], { encoding: 'utf8' })
      process.stdout.write(`| ${w} | ${run.status === 0 ? 'read all 60 MiB' : /heap out of memory/i.test(run.stderr) ? 'out of memory' : `exit ${String(run.status)}`} |\n`)
    }
  })
}

await main()
