/**
 * A full disk under the real app over FileSessionStorage: the affected session answers 507
 * SS_STORAGE_FAILED, other sessions keep working, and no file is left with a partial line,
 * before or after a restart (API.md "Status codes", SPEC.md §8.7). Runs on the simulated full
 * disk always, and on a real tmpfs when this machine lets the test mount one (else that test is
 * reported skipped, with the reason). The long version is bench/faults/disk-full.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { runOneFileFull, runSharedDiskFull } from './support/disk-full-scenario.js'
import { simulatedVolume, tmpfsUnavailable, tmpfsVolume, type Volume } from './support/volumes.js'

let volume: Volume | undefined
afterEach(() => {
  volume?.dispose()
  volume = undefined
})

describe('disk full', () => {
  it('simulated disk (a short write, then ENOSPC): 507 for the affected sessions, whole lines everywhere, all recovered after a restart', async () => {
    volume = simulatedVolume({ leave: 100 })
    const result = await runSharedDiskFull(volume)
    expect(result.problems).toEqual([])
    expect(result.shortWrites).toBeGreaterThanOrEqual(1)
    expect(result.refusals).toBeGreaterThanOrEqual(1)
    expect(result.failures).toBe(4)
  })

  it('only one session\'s file is on the full disk: the others keep reading and writing meanwhile', async () => {
    const victim: { path?: string } = {}
    volume = simulatedVolume({ leave: 100, affects: (path) => path === victim.path })
    const result = await runOneFileFull(volume, victim)
    expect(result.problems).toEqual([])
    expect(result.shortWrites).toBe(1)
    expect(result.failures).toBe(1)
  })

  const noTmpfs = tmpfsUnavailable()
  it.skipIf(noTmpfs !== undefined)(`real tmpfs: the same guarantees${noTmpfs === undefined ? '' : ` (skipped: ${noTmpfs})`}`, async () => {
    volume = tmpfsVolume()
    if (volume === undefined) throw new Error('a tmpfs mounted for the probe but not for the test')
    expect(volume.kind).toBe('tmpfs')
    const result = await runSharedDiskFull(volume)
    console.log(`disk full on tmpfs: ${result.failures} × 507, ${result.shortWrites} short writes, ${result.refusals} ENOSPC`)
    expect(result.problems).toEqual([])
    expect(result.refusals).toBeGreaterThanOrEqual(1)
    expect(result.failures).toBe(4)
  })
})
