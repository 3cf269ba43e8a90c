/**
 * `npm run bench`: runs every benchmark (each bounded to about two minutes) and rewrites
 * bench/RESULTS.md. `npm run bench -- append cold` runs only the named ones and prints their
 * sections without touching RESULTS.md. Names: append, bounds, profile, fanout, ceiling, cold, deep, many, scale, gc, pgdriver, pgstorage, pgmulti, pgserver, ui.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { appendProfileSection, measureAppendProfile } from './append-profile.js'
import { boundsSection, measureBounds } from './append-bounds.js'
import { appendSection, measureAppends, type AppendResults } from './append.js'
import { coldOpenSection, measureColdOpen, type ColdOpenResults } from './cold-open.js'
import { deepPathSection, deepPathTable, measureDeepHttp, type DeepHttpResult, type DeepPathResult } from './deep-path.js'
import { ceilingSection, measureCeiling, type CeilingRun } from './fanout-ceiling.js'
import { fanoutSection, runScenario, SCENARIOS, type ScenarioResult } from './fanout.js'
import { gcSection, measureGc } from './gc.js'
import { buildOnce, SERVER_UNDER_TEST } from './lib/processes.js'
import { fmt } from './lib/stats.js'
import { manySessionsSection, measureManySessions, type ManyResults } from './many-sessions.js'
import { driverSection, measureDrivers } from './pg-driver.js'
import { measureMulti, multiSection } from './pg-multi.js'
import { measurePgServer, pgServerSection } from './pg-server.js'
import { measurePgStorage, pgStorageSection } from './pg-storage.js'
import { measureScale, scaleSection } from './scale.js'
import { measureUiOpen, uiOpenSection, type UiOpenResults } from './ui-open.js'

const APPEND = { rounds: 3, durationS: 5, warmupS: 2 }
const BOUNDS = { rounds: 3, durationS: 5, warmupS: 2 }
const PROFILE = { durationS: 10, warmupS: 2 }
const PG_SERVER = { rounds: 3, durationS: 5, warmupS: 2 }
const CEILING = { runs: 3, subscribers: 1000, rates: [50, 1000], seconds: 4 }
const PG_MULTI = { subscribers: 100, rate: 200, seconds: 15 }
const RESULTS = join(import.meta.dirname, 'RESULTS.md')
const HISTORY_HEADING = '## History (written by hand'

interface Results {
  append?: AppendResults
  fanout?: ScenarioResult[]
  ceiling?: CeilingRun[]
  cold?: ColdOpenResults
  deep?: { rows: DeepPathResult[], http: DeepHttpResult }
  many?: ManyResults
  ui?: UiOpenResults
}

function machine (): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  return `${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/** Section texts and wall times, in run order. */
const sections: string[] = []
const walls: Array<[string, number]> = []
const results: Results = {}

async function step (name: string, run: () => Promise<string>): Promise<void> {
  const start = performance.now()
  process.stderr.write(`bench: ${name}…\n`)
  sections.push(await run())
  walls.push([name, (performance.now() - start) / 1000])
}

const STEPS: Record<string, () => Promise<string>> = {
  append: async () => {
    results.append = await measureAppends(APPEND)
    return appendSection(results.append, APPEND)
  },
  bounds: async () => boundsSection(await measureBounds(BOUNDS), BOUNDS),
  profile: async () => appendProfileSection(await measureAppendProfile(PROFILE), PROFILE),
  fanout: async () => {
    results.fanout = []
    for (const s of SCENARIOS) results.fanout.push(await runScenario(s))
    return fanoutSection(results.fanout)
  },
  ceiling: async () => {
    results.ceiling = await measureCeiling(CEILING)
    return ceilingSection(results.ceiling, CEILING)
  },
  cold: async () => {
    results.cold = await measureColdOpen(3)
    return coldOpenSection(results.cold)
  },
  deep: async () => {
    results.deep = { rows: deepPathTable([50_000, 100_000], 3), http: await measureDeepHttp(100_000, 3) }
    return deepPathSection(results.deep.rows, results.deep.http)
  },
  many: async () => manySessionsSection(results.many = await measureManySessions(3)),
  scale: async () => scaleSection(await measureScale()),
  gc: async () => gcSection(await measureGc()),
  pgdriver: async () => driverSection(await measureDrivers(3), 3),
  pgstorage: async () => pgStorageSection(await measurePgStorage(3), 3),
  pgmulti: async () => multiSection(await measureMulti(PG_MULTI), PG_MULTI),
  pgserver: async () => pgServerSection(await measurePgServer(PG_SERVER), PG_SERVER),
  ui: async () => uiOpenSection(results.ui = await measureUiOpen()),
}

/** The filesystem the benchmarks' data directories live on (`df -T` of the temp dir): fdatasync costs what it costs there. */
function filesystem (): string {
  const df = spawnSync('df', ['-T', tmpdir()], { encoding: 'utf8' })
  const fields = df.status === 0 ? (df.stdout.trim().split('\n')[1] ?? '').split(/\s+/) : []
  return fields.length >= 2 ? `\`${tmpdir()}\` on ${fields[1]} (\`${fields[0]}\`, \`df -T\`)` : `\`${tmpdir()}\` (filesystem unknown: \`df -T\` failed)`
}

/** Sections that benchmarks run on their own write (bench/soak.ts, bench/heap-growth.ts, bench/body-checks.ts), just before the history. */
const OWN_SECTIONS = ['## Soak: ', '## Heap growth ', '## JSON body checks ', '## Full-text search']

/**
 * The end of RESULTS.md that this run does not measure, kept as it is: the sections of the
 * benchmarks run on their own, then the hand-written history (figures of earlier runs and what
 * changed between them).
 */
function history (): string {
  try {
    const text = readFileSync(RESULTS, 'utf8')
    const at = Math.min(...[...OWN_SECTIONS, HISTORY_HEADING].map((h) => text.indexOf(`\n${h}`) + 1).filter((i) => i > 0))
    return Number.isFinite(at) ? text.slice(at).trimEnd() : ''
  } catch {
    return ''
  }
}

const wanted = process.argv.slice(2)
for (const name of wanted) if (STEPS[name] === undefined) throw new Error(`unknown benchmark ${name}; known: ${Object.keys(STEPS).join(', ')}`)
buildOnce()
const start = performance.now()
const load0 = loadavg()
for (const [name, run] of Object.entries(STEPS)) {
  if (wanted.length === 0 || wanted.includes(name)) await step(name, run)
}
const totalS = (performance.now() - start) / 1000
const summary = [
  `Machine: ${machine()}. Servers, baselines and load generators (the clients) all run on these same CPUs, each in its own`,
  `process. Load average (1/5/15 min) at the start ${load0.map((l) => l.toFixed(2)).join(' / ')}, at the end ${loadavg().map((l) => l.toFixed(2)).join(' / ')}:`,
  'the machine may be shared with other work, which is why every speed figure is a ratio to a baseline measured in the same',
  'run, or a median over runs, and why single figures vary between runs.',
  '',
  `Data directories: ${filesystem()}.`,
  '',
  `The server under test: ${SERVER_UNDER_TEST}. 127.0.0.1 only.`,
  '',
  `\`npm run bench\` wall time: ${fmt(totalS / 60, 1)} min (${walls.map(([n, s]) => `${n} ${fmt(s, 0)} s`).join(', ')}).`,
  '',
  'Every figure below was measured by this run, except the sections of the soak, of heap growth and of the JSON body',
  'checks (their own runs, dated in them), a section whose first line dates a run of its own (`npx tsx bench/pg-server.ts`)',
  'and the history at the end, which is written by hand.',
].join('\n')
const doc = ['# Benchmark results', summary, ...sections, history()].filter((part) => part !== '').join('\n\n') + '\n'
if (wanted.length === 0) writeFileSync(RESULTS, doc)
console.log(doc)
