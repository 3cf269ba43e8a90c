/**
 * kill -9 of the real server in the middle of 20 concurrent writers (several sessions, single
 * appends and batches, one writer creating sessions), then restarts on the same DATA_DIR:
 * every append acknowledged `persisted: true` survives, every file loads and parses without a
 * lost line, ids are unique, parents exist; appends after the restart survive a clean restart
 * even behind a torn last line (API.md "persisted", SPEC.md §8.4, §8.8). The long version is
 * bench/faults/crash.ts. Replay a round with FAULT_SEED=<seed>.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCrashRound } from './support/crash-scenario.js'
import { seedFromEnv } from './support/prng.js'

const ROUNDS = 3
const dirs: string[] = []
afterAll(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }) })

describe('kill -9 during concurrent writers', () => {
  const first = seedFromEnv()
  for (let round = 0; round < ROUNDS; round++) {
    it(`round ${round + 1}: nothing acknowledged is lost, every file loads, later appends survive`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'ss-crash-'))
      dirs.push(dataDir)
      const seed = (first + round) >>> 0
      const result = await runCrashRound({ dataDir, seed })
      console.log(`crash round ${round + 1}: seed ${seed}, ${result.acknowledged} acknowledged, ${result.sessions} sessions, ` +
        `${result.naturalTornTails} natural torn tails, injected ${result.injectedTornTail}, ${result.ms} ms`)
      expect(result.problems).toEqual([])
      expect(result.acknowledged).toBeGreaterThanOrEqual(100)
      expect(result.sessions).toBeGreaterThan(4)
    }, 60_000)
  }
})
