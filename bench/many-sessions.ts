/**
 * Many sessions (target 6): a DATA_DIR with 10,000 small sessions over 100 working directories.
 * Each run starts the server, times spawn → `/readyz` 200 (the start-up index scan included),
 * then touches every session once (`GET /v1/sessions/{id}/context`, 16 at a time) and reads the
 * server's RSS: the registry keeps at most MAX_OPEN_SESSIONS (default 1,000) loaded.
 * Run alone: npx tsx bench/many-sessions.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { writeManySessions } from './lib/generate.js'
import { loadConfig } from '../src/config.js'
import { cpuSecondsOf, startOurServer } from './lib/processes.js'
import { fmt, int, median, mib, table, verdict } from './lib/stats.js'

const SESSIONS = 10_000
const DIRS = 100
const CONCURRENCY = 16

export interface ManyRun { readyMs: number, readyCpuS: number, touchMs: number, failed: number, rssAfter: number, peak: number }
export interface ManyResults { sessions: number, bytes: number, generateMs: number, runs: ManyRun[] }

/** GETs the context of every id, `CONCURRENCY` at a time; resolves the number of non-200 answers. */
async function touchAll (baseUrl: string, ids: string[]): Promise<number> {
  const pool = new Pool(baseUrl, { connections: CONCURRENCY })
  let next = 0
  let failed = 0
  const worker = async (): Promise<void> => {
    for (let i = next++; i < ids.length; i = next++) {
      const res = await pool.request({ method: 'GET', path: `/v1/sessions/${ids[i] as string}/context` })
      await res.body.arrayBuffer()
      if (res.statusCode !== 200) failed++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  await pool.close()
  return failed
}

export async function measureManySessions (runs = 3): Promise<ManyResults> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-many-'))
  try {
    const g0 = performance.now()
    const { ids, bytes } = writeManySessions(dataDir, SESSIONS, DIRS)
    const generateMs = performance.now() - g0
    const results: ManyRun[] = []
    for (let i = 0; i < runs; i++) {
      const server = await startOurServer(dataDir)
      try {
        const readyCpuS = cpuSecondsOf(server.child.pid)
        const t0 = performance.now()
        const failed = await touchAll(server.baseUrl, ids)
        const touchMs = performance.now() - t0
        const { rss, peak } = server.child.memory()
        results.push({ readyMs: server.readyMs, readyCpuS, touchMs, failed, rssAfter: rss, peak })
        process.stderr.write(`many sessions run ${i + 1}: ready ${fmt(server.readyMs, 0)} ms (${fmt(readyCpuS, 2)} s CPU), touched in ${fmt(touchMs, 0)} ms, RSS ${mib(rss)} MiB\n`)
      } finally {
        await server.stop()
      }
    }
    return { sessions: ids.length, bytes, generateMs, runs: results }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

export function manySessionsSection (r: ManyResults): string {
  const ready = median(r.runs.map((x) => x.readyMs))
  const rss = median(r.runs.map((x) => x.rssAfter))
  const peak = median(r.runs.map((x) => x.peak))
  const ok = r.runs.every((x) => x.failed === 0)
  return [
    '## Many sessions (target 6)',
    '',
    `${int(r.sessions)} sessions (${mib(r.bytes)} MiB) in ${DIRS} working directories, written by \`bench/lib/generate.ts\` in`,
    `${fmt(r.generateMs / 1000, 1)} s. Each of ${r.runs.length} runs starts the server on them and times spawn → \`/readyz\` 200 (process start, start-up`,
    'index scan, listen; `/readyz` answers 503 until the scan is done), and reads the server process\'s CPU time (user + system,',
    '`/proc/<pid>/stat`) at that moment: on a shared machine the wall time also counts the waits for a core, the CPU time',
    `does not. Then it GETs every session's context once (${CONCURRENCY} at a time; MAX_OPEN_SESSIONS is left at its default`,
    `of ${int(loadConfig({}).maxOpenSessions)}, so the registry evicts) and reads the server's RSS.`,
    '',
    table(['run', 'ready ms', 'server CPU s to ready', 'touch all ms', 'non-200', 'RSS after MiB', 'peak RSS MiB'],
      r.runs.map((x, i) => [String(i + 1), fmt(x.readyMs, 0), fmt(x.readyCpuS, 2), fmt(x.touchMs, 0), String(x.failed), mib(x.rssAfter), mib(x.peak)])),
    '',
    table(['target', 'measured', 'verdict'], [
      ['/readyz 200 within 5 s', `${fmt(ready, 0)} ms (median)`, verdict(ready <= 5000)],
      ['RSS ≤ 500 MB after touching every session', `${mib(rss)} MiB (peak ${mib(peak)} MiB), every answer 200: ${ok ? 'yes' : 'no'}`, verdict(rss <= 500e6 && ok)],
    ]),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(manySessionsSection(await measureManySessions(3)))
}
