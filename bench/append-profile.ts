/**
 * Where the CPU of a durable append goes, by profile, before and after: the server as shipped
 * now, the same server at an earlier commit (`BEFORE`, checked out and built in a temporary
 * worktree), and the floor (`lib/durable-floor.ts`, the least a durable Node server does), each
 * run alone under `node --cpu-prof` with the two loads of the append benchmark (1 session × 100
 * connections; 100 sessions × 1 connection). The main thread's samples of each load's window
 * are sorted by what their stack was doing (lib/cpu-profile.ts) and divided by the appends
 * answered in that window; the process's CPU of all threads (thread pool, search worker) per
 * append is beside them. Profiling slows every server alike; the req/s here are not the append
 * benchmark's.
 * Run alone: npx tsx bench/append-profile.ts
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCannon, type CannonConfig } from './lib/cannon.js'
import { KIND_NAMES, monotonicUs, profileWindow, readProfile, type WindowProfile } from './lib/cpu-profile.js'
import { createDurableSession, messageBody } from './lib/http.js'
import { buildOnce, cpuSecondsOf, ROOT, startOurServer, startScriptServer, type ServerHandle } from './lib/processes.js'
import { fmt, int, table } from './lib/stats.js'

/** The commit the "before" columns run: the server before the storage seam and the work on appends that followed it. */
export const BEFORE = 'ba6c523'
const CONNECTIONS = 100
const BODY = messageBody(1024)
const LOADS = ['1 session × 100 connections', '100 sessions × 1 connection'] as const
type Load = typeof LOADS[number]
const SERVERS = ['before', 'now', 'floor'] as const
type Server = typeof SERVERS[number]

export interface ProfileOptions { durationS: number, warmupS: number }
interface LoadProfile { appends: number, rps: number, main: WindowProfile, mainCpuUs: number, processUs: number }
export type ProfileResults = Record<Server, Record<Load, LoadProfile> | { error: string }>

/** The server at `BEFORE`, built in a temporary worktree (removed by `cleanup`). */
function checkOutBefore (): { root: string, cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'ss-before-'))
  const cleanup = (): void => {
    spawnSync('git', ['worktree', 'remove', '--force', root], { cwd: ROOT })
    rmSync(root, { recursive: true, force: true })
  }
  const steps: Array<[string, string[], string]> = [
    ['git', ['worktree', 'add', '--detach', '--force', root, BEFORE], ROOT],
    ['npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], root],
    ['npm', ['run', 'build'], root],
  ]
  for (const [command, args, cwd] of steps) {
    const run = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    if (run.status !== 0) {
      cleanup()
      throw new Error(`${command} ${args.join(' ')}: ${(run.stderr || run.stdout).slice(-1000)}`)
    }
  }
  return { root, cleanup }
}

async function start (server: Server, dataDir: string, profileDir: string, root: string): Promise<ServerHandle> {
  const prof = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]
  if (server === 'floor') return await startScriptServer('bench/lib/durable-floor.ts', [dataDir], {}, [...prof, '--require', join(ROOT, 'scripts', 'start.cjs')])
  return await startOurServer(dataDir, {}, 120_000, prof, undefined, root)
}

async function loadsOf (server: Server, handle: ServerHandle): Promise<Record<Load, CannonConfig>> {
  const base = { connections: CONNECTIONS, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: BODY, bodyIncludes: '"persisted":true' }
  if (server === 'floor') {
    return {
      [LOADS[0]]: { ...base, durationS: 0, url: `${handle.baseUrl}/files/0` },
      [LOADS[1]]: { ...base, durationS: 0, url: `${handle.baseUrl}/files/1`, paths: Array.from({ length: CONNECTIONS }, (_, i) => `/files/${i + 1}`) },
    } as Record<Load, CannonConfig>
  }
  const ids: string[] = []
  for (let i = 0; i < CONNECTIONS; i++) ids.push(await createDurableSession(handle.baseUrl, `/bench/profile/${i % 10}`))
  const paths = ids.map((id) => `/v1/sessions/${id}/entries`)
  return {
    [LOADS[0]]: { ...base, durationS: 0, url: `${handle.baseUrl}${paths[0] as string}` },
    [LOADS[1]]: { ...base, durationS: 0, url: `${handle.baseUrl}${paths[0] as string}`, paths },
  } as Record<Load, CannonConfig>
}

async function profileServer (server: Server, root: string, o: ProfileOptions): Promise<Record<Load, LoadProfile>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ss-profile-data-'))
  const profileDir = mkdtempSync(join(tmpdir(), 'ss-profile-'))
  try {
    const handle = await start(server, dataDir, profileDir, root)
    const windows: Array<{ load: Load, from: number, to: number, appends: number, rps: number, mainCpuUs: number, processUs: number }> = []
    try {
      const loads = await loadsOf(server, handle)
      for (const load of LOADS) await runCannon({ ...loads[load], durationS: o.warmupS })
      for (const load of LOADS) {
        const pid = handle.child.pid
        const [cpu0, main0] = [cpuSecondsOf(pid), cpuSecondsOf(pid, true)]
        const from = monotonicUs()
        const s = await runCannon({ ...loads[load], durationS: o.durationS })
        const to = monotonicUs()
        if (s.non2xx + s.errors + s.timeouts + s.mismatches > 0) throw new Error(`${server}, ${load}: ${JSON.stringify(s.statuses)}, ${s.errors} errors`)
        windows.push({ load, from, to, appends: s.ok, rps: s.rps, mainCpuUs: (cpuSecondsOf(pid, true) - main0) * 1e6, processUs: (cpuSecondsOf(pid) - cpu0) * 1e6 })
      }
    } finally {
      await handle.stop()
    }
    const profile = readProfile(profileDir)
    const out = {} as Record<Load, LoadProfile>
    for (const w of windows) {
      const main = profileWindow(profile, w.from, w.to)
      if (main.busyUs === 0) throw new Error(`${server}, ${w.load}: no samples of the profile fall in the load's window`)
      out[w.load] = { appends: w.appends, rps: w.rps, main, mainCpuUs: w.mainCpuUs, processUs: w.processUs }
    }
    return out
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(profileDir, { recursive: true, force: true })
  }
}

export async function measureAppendProfile (o: ProfileOptions): Promise<ProfileResults> {
  buildOnce()
  const results = {} as ProfileResults
  let before: { root: string, cleanup: () => void } | undefined
  try {
    before = checkOutBefore()
  } catch (err) {
    results.before = { error: (err as Error).message }
  }
  try {
    for (const server of SERVERS) {
      if (server === 'before' && before === undefined) continue
      results[server] = await profileServer(server, server === 'before' ? (before as { root: string }).root : ROOT, o)
    }
  } finally {
    before?.cleanup()
  }
  return results
}

export const PROFILE_HEADING = '## Where the CPU of an append goes, by profile, before and after'

export function appendProfileSection (r: ProfileResults, o: ProfileOptions): string {
  const ok = SERVERS.filter((s) => !('error' in r[s]))
  const tables = LOADS.map((load) => {
    const of = (s: Server): LoadProfile => (r[s] as Record<Load, LoadProfile>)[load]
    const per = (s: Server, us: number): string => fmt(us / of(s).appends, 1)
    const share = (s: Server, us: number): string => `${per(s, us)} (${fmt(100 * us / of(s).main.busyUs, 0)} %)`
    const rows = KIND_NAMES.map((kind) => [kind, ...ok.map((s) => share(s, of(s).main.byKind.get(kind) ?? 0))])
    rows.push(['**main thread busy (samples), total**', ...ok.map((s) => `**${per(s, of(s).main.busyUs)}**`)])
    rows.push(['main thread CPU time (/proc)', ...ok.map((s) => per(s, of(s).mainCpuUs))])
    rows.push(['process CPU time, all threads (/proc)', ...ok.map((s) => per(s, of(s).processUs))])
    rows.push(['appends/s while profiled', ...ok.map((s) => int(of(s).rps))])
    const vsFloor = ok.includes('floor')
      ? ok.filter((s) => s !== 'floor').map((s) => `${s}: ${fmt(of(s).main.busyUs / of(s).appends / (of('floor').main.busyUs / of('floor').appends), 2)}× the floor's main-thread busy time per append, ` +
        `${fmt(of(s).mainCpuUs / of(s).appends / (of('floor').mainCpuUs / of('floor').appends), 2)}× its main-thread CPU`).join('; ')
      : ''
    return `### ${load}\n\n${table(['µs per append (share of the busy samples)', ...ok], rows)}\n${vsFloor === '' ? '' : `\n${vsFloor}.\n`}`
  })
  const failed = SERVERS.filter((s) => 'error' in r[s]).map((s) => `The ${s} server was not measured: ${(r[s] as { error: string }).error}\n`)
  return `${PROFILE_HEADING}

"now" is this checkout's server as shipped (\`npm start\`, default settings), "before" the same server at commit \`${BEFORE}\`
(checked out and built in a temporary worktree, started the same way), "floor" the minimal durable server of the append
section. Each runs alone under \`node --cpu-prof\`: ${o.warmupS} s of each load to warm up, then ${o.durationS} s of each load
(1 KB \`message\` entries, ${CONNECTIONS} connections, every answer checked for \`"persisted":true\`). The main thread's samples
in each load's window are sorted by the frames on their stack (\`bench/lib/cpu-profile.ts\`: the first kind listed that
matches takes the sample) and divided by the appends answered in that window; idle samples are left out. Samples are
taken by the clock, so a thread that is ready to run but waits for a core counts that wait to what it was doing: on
this machine, where the load generator and the server share two cores, the busy time exceeds the main thread's CPU time
(measured beside it), most of all where the thread wakes the thread pool (file calls) and is then put aside for it.
The main thread is what an append load saturates, so its busy time per append is what bounds appends per second.

${[...tables, ...failed].join('\n')}`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const o = { durationS: Number(process.env.PROFILE_SECONDS ?? 10), warmupS: 2 }
  console.log(appendProfileSection(await measureAppendProfile(o), o))
}
