/**
 * Long form of test/faults/disk-full.test.ts: the disk-full scenarios again and again, with the
 * room left on the simulated disk drawn at random (so the failing write is cut at a different
 * byte each time) and, when this machine can mount one, real tmpfs volumes of varying sizes.
 *
 *   npx tsx bench/faults/disk-full.ts [--iterations 300] [--seed N] [--max-seconds 100]
 */
import { runOneFileFull, runSharedDiskFull, type DiskFullResult } from '../../test/faults/support/disk-full-scenario.js'
import { createRng, seedFromEnv } from '../../test/faults/support/prng.js'
import { simulatedVolume, tmpfsVolume, type Volume } from '../../test/faults/support/volumes.js'
import { numberFlag, report } from './args.js'

const iterations = numberFlag('iterations', 300)
const seed = numberFlag('seed', seedFromEnv())
const deadline = Date.now() + numberFlag('max-seconds', 100) * 1000
const rng = createRng(seed)
const problems: string[] = []
const tally = { shared: 0, oneFile: 0, tmpfs: 0, failures: 0, shortWrites: 0, refusals: 0 }
let tmpfsPossible = true

async function run (label: string, volume: Volume, scenario: (v: Volume) => Promise<DiskFullResult>): Promise<void> {
  try {
    const r = await scenario(volume)
    tally.failures += r.failures
    tally.shortWrites += r.shortWrites
    tally.refusals += r.refusals
    problems.push(...r.problems.map((p) => `${label}: ${p}`))
  } finally {
    volume.dispose()
  }
}

const started = Date.now()
for (let i = 0; i < iterations && Date.now() < deadline; i++) {
  const leave = rng.int(0, 16_000)
  const kind = i % 3
  if (kind === 0) {
    tally.shared++
    await run(`shared, leave ${leave}`, simulatedVolume({ leave }), runSharedDiskFull)
  } else if (kind === 1) {
    tally.oneFile++
    const victim: { path?: string } = {}
    await run(`one file, leave ${leave}`, simulatedVolume({ leave, affects: (p) => p === victim.path }), async (v) => await runOneFileFull(v, victim))
  } else if (tmpfsPossible) {
    const size = rng.pick([256, 512, 1024, 2048, 4096])
    const volume = tmpfsVolume(size)
    if (volume === undefined) { tmpfsPossible = false; continue }
    tally.tmpfs++
    await run(`tmpfs ${size} KiB`, volume, runSharedDiskFull)
  }
}
console.log(`\ndisk full: ${tally.shared} shared-disk runs, ${tally.oneFile} one-file runs, ${tally.tmpfs} tmpfs runs` +
  `${tmpfsPossible ? '' : ' (tmpfs cannot be mounted here)'} in ${((Date.now() - started) / 1000).toFixed(1)} s, seed ${seed}`)
console.log(`  ${tally.failures} answers 507, ${tally.shortWrites} short writes, ${tally.refusals} ENOSPC refusals; every file checked for partial lines`)
report(problems)
