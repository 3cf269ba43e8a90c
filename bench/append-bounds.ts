/**
 * What bounds a durable append of session-store from above, measured beside the floor of the
 * append benchmark in the same rounds:
 * - the floor (`lib/durable-floor.ts`): node:http, the write and `fdatasync` of §8.4, group commit;
 * - the same floor behind a Fastify route that logs one `info` line per request (`--fastify`):
 *   what the framework and the request log leave of the floor before any work of session-store's;
 * - session-store as shipped (`npm start`, default settings);
 * - session-store with `SEARCH_INDEX=0`, everything else as shipped: what the search index's
 *   upkeep costs the appends on this machine, where its thread shares the cores with the server
 *   and the load generator.
 * Both loads of the append benchmark; rounds interleaved; medians of the per-round ratios.
 * Run alone: npx tsx bench/append-bounds.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkClean, runCannon, type CannonConfig } from './lib/cannon.js'
import { createDurableSession, messageBody } from './lib/http.js'
import { cpuSecondsOf, ROOT, startOurServer, startScriptServer, type ServerHandle } from './lib/processes.js'
import { fmt, int, median, table } from './lib/stats.js'

const CONNECTIONS = 100
const BODY = messageBody(1024)
const SERVERS = ['floor', 'fastify', 'ours', 'oursNoIndex'] as const
type Server = typeof SERVERS[number]
const LABELS: Record<Server, string> = {
  floor: 'minimal durable `node:http` server (the floor)',
  fastify: 'the floor behind a Fastify route, one `info` log line per request',
  ours: 'session-store as shipped',
  oursNoIndex: 'session-store, `SEARCH_INDEX=0`',
}
const LOADS = ['1 session × 100 connections', '100 sessions × 1 connection'] as const
type Load = typeof LOADS[number]

export interface BoundsOptions { rounds: number, durationS: number, warmupS: number }
interface Run { rps: number, cores: number }
export type BoundsResults = Record<Load, Record<Server, Run[]>>

interface Fixture { handles: Record<Server, ServerHandle>, sessions: Record<'ours' | 'oursNoIndex', string[]> }

function load (f: Fixture, server: Server, which: Load, durationS: number): CannonConfig {
  const base = { connections: CONNECTIONS, durationS, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: BODY, bodyIncludes: '"persisted":true' }
  const url = f.handles[server].baseUrl
  const paths = server === 'floor' || server === 'fastify'
    ? Array.from({ length: CONNECTIONS }, (_, i) => `/files/${i}`)
    : f.sessions[server].map((id) => `/v1/sessions/${id}/entries`)
  const first = paths[0] as string
  return { ...base, url: url + first, ...(which === LOADS[0] ? {} : { paths }) }
}

export async function measureBounds (options: BoundsOptions): Promise<BoundsResults> {
  const dirs = [mkdtempSync(join(tmpdir(), 'bench-bounds-ours-')), mkdtempSync(join(tmpdir(), 'bench-bounds-noindex-'))]
  const poolSized = ['--require', join(ROOT, 'scripts', 'start.cjs')]
  const started = await Promise.allSettled([
    startScriptServer('bench/lib/durable-floor.ts', [tmpdir()], {}, poolSized),
    startScriptServer('bench/lib/durable-floor.ts', [tmpdir(), '--fastify'], {}, poolSized),
    startOurServer(dirs[0] as string),
    startOurServer(dirs[1] as string, { SEARCH_INDEX: '0' }),
  ])
  const stopAll = async (): Promise<void> => {
    await Promise.all(started.map(async (s) => { if (s.status === 'fulfilled') await s.value.stop() }))
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
  try {
    const failed = started.find((s) => s.status === 'rejected')
    if (failed !== undefined) throw new Error(`a server did not start: ${String(failed.reason)}`)
    const [floor, fastify, ours, oursNoIndex] = started.map((s) => (s as PromiseFulfilledResult<ServerHandle>).value)
    const handles = { floor, fastify, ours, oursNoIndex } as Record<Server, ServerHandle>
    const sessionsOf = async (h: ServerHandle): Promise<string[]> => {
      const ids: string[] = []
      for (let i = 0; i < CONNECTIONS; i++) ids.push(await createDurableSession(h.baseUrl, `/bench/bounds/${i % 10}`))
      return ids
    }
    const f: Fixture = { handles, sessions: { ours: await sessionsOf(handles.ours), oursNoIndex: await sessionsOf(handles.oursNoIndex) } }
    const results = Object.fromEntries(LOADS.map((l) => [l, Object.fromEntries(SERVERS.map((s) => [s, []]))])) as unknown as BoundsResults
    for (const which of LOADS) for (const server of SERVERS) checkClean(`${server}, ${which}, warm-up`, await runCannon(load(f, server, which, options.warmupS)))
    for (let round = 0; round < options.rounds; round++) {
      for (const which of LOADS) {
        // The order rotates, so no server always follows the same one.
        for (let k = 0; k < SERVERS.length; k++) {
          const server = SERVERS[(k + round) % SERVERS.length] as Server
          const pid = handles[server].child.pid
          const cpu0 = cpuSecondsOf(pid)
          const s = await runCannon(load(f, server, which, options.durationS))
          checkClean(`${server}, ${which}`, s)
          results[which][server].push({ rps: s.rps, cores: (cpuSecondsOf(pid) - cpu0) / s.durationS })
          process.stderr.write(`bounds round ${round + 1} ${which} ${server}: ${int(s.rps)} req/s\n`)
        }
      }
    }
    return results
  } finally {
    await stopAll()
  }
}

export function boundsSection (r: BoundsResults, options: BoundsOptions): string {
  const rows: string[][] = []
  const ratios: string[][] = []
  for (const which of LOADS) {
    const runs = r[which]
    for (const server of SERVERS) {
      const list = runs[server]
      rows.push([which, LABELS[server], int(median(list.map((x) => x.rps))), fmt(median(list.map((x) => x.cores)), 2),
        fmt(median(list.map((x) => x.cores * 1e6 / x.rps)), 0), list.map((x) => int(x.rps)).join(' / ')])
    }
    const ratio = (name: string, a: Server, b: Server): void => {
      const values = runs[a].map((x, i) => x.rps / (runs[b][i] as Run).rps)
      ratios.push([which, name, `×${fmt(median(values), 2)}`, values.map((v) => fmt(v, 2)).join(' / ')])
    }
    ratio('Fastify floor ÷ floor', 'fastify', 'floor')
    ratio('session-store `SEARCH_INDEX=0` ÷ floor', 'oursNoIndex', 'floor')
    ratio('session-store ÷ floor', 'ours', 'floor')
    ratio('session-store ÷ session-store `SEARCH_INDEX=0`', 'ours', 'oursNoIndex')
  }
  return [
    '## What bounds an append from above',
    '',
    `The two loads of the append section (1 KB \`message\` entries, ${CONNECTIONS} connections), ${options.durationS} s per load, ${options.rounds} rounds`,
    `interleaved in rotating order after a ${options.warmupS} s warm-up of each, on four servers side by side: the floor of the`,
    'append section; the same floor (its group commit and `fdatasync`, `bench/lib/durable-floor.ts --fastify`) behind a',
    'Fastify route that parses the JSON body and logs one `info` line per request to /dev/null, with the fields of',
    'session-store\'s request line (no schema, no other hook); session-store as shipped; and session-store with',
    '`SEARCH_INDEX=0`, everything else as shipped. The Fastify row is what the framework and a request log leave of the',
    'floor before any work of session-store\'s own; the last ratio is what keeping the search index up to date costs',
    'the appends here, where its thread shares the two cores with the server and the load generator. Every answer was',
    'checked for `"persisted":true`. "CPU µs per request" is the server process\'s CPU (all threads) per request.',
    '',
    table(['load', 'server', 'req/s (median)', 'server CPU (cores)', 'CPU µs per request', 'req/s per round'], rows),
    '',
    table(['load', 'ratio', 'median', 'per round'], ratios),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = { rounds: 3, durationS: 5, warmupS: 2 }
  console.log(boundsSection(await measureBounds(options), options))
}
