/**
 * Long form of test/faults/crash.process.test.ts: kill -9 of the real server during 20
 * concurrent writers, restart, verify, append, clean restart, verify — 20 rounds by default,
 * stopping early once about 2 minutes have passed.
 *
 *   npx tsx bench/faults/crash.ts [--rounds 20] [--seed N] [--max-seconds 120]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCrashRound } from '../../test/faults/support/crash-scenario.js'
import { seedFromEnv } from '../../test/faults/support/prng.js'
import { buildOnce, ROOT } from '../lib/processes.js'
import { numberFlag, report } from './args.js'

buildOnce() // dist/ as `npm start` leaves it, compiled before any round
const serverEntry = join(ROOT, 'dist', 'src', 'server.js')
const rounds = numberFlag('rounds', 20)
const first = numberFlag('seed', seedFromEnv())
const deadline = Date.now() + numberFlag('max-seconds', 120) * 1000
const problems: string[] = []
let done = 0
let acknowledged = 0
let natural = 0
let injected = 0
const started = Date.now()
for (let round = 0; round < rounds && Date.now() < deadline; round++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'ss-crash-bench-'))
  const seed = (first + round) >>> 0
  const r = await runCrashRound({ dataDir, seed, serverEntry })
  done++
  acknowledged += r.acknowledged
  natural += r.naturalTornTails
  injected += r.injectedTornTail ? 1 : 0
  problems.push(...r.problems.map((p) => `round ${round + 1} (seed ${seed}): ${p}`))
  console.log(`round ${round + 1}: seed ${seed}, ${r.acknowledged} acknowledged, ${r.sessions} sessions, ` +
    `${r.naturalTornTails} natural torn tails, ${r.problems.length} problems, ${r.ms} ms`)
  if (r.problems.length === 0) rmSync(dataDir, { recursive: true, force: true })
}
console.log(`\ncrash: ${done}/${rounds} rounds in ${((Date.now() - started) / 1000).toFixed(1)} s, first seed ${first}`)
console.log(`  ${acknowledged} appends acknowledged persisted before a kill, all checked after restart`)
console.log(`  torn last lines: ${natural} left by kill -9 itself, ${injected} written by the test (each must stay one skipped line)`)
report(problems)
