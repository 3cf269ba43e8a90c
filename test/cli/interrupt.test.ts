/**
 * Ctrl-C during a long run (the abort signal of `Io`): `import` and `migrate` stop before the
 * next file, say so, release the DATA_DIR lock and exit 1.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/run.js'
import { FIXTURES, memoryIo } from './helpers.js'

const V1 = join(FIXTURES, 'pi-v1-before-compaction.jsonl')
const V1_LARGE = join(FIXTURES, 'pi-v1-large-session.jsonl')

let dataDir: string
let interrupted: AbortSignal
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'ss-cli-int-'))
  const controller = new AbortController()
  controller.abort()
  interrupted = controller.signal
})
afterEach(() => rmSync(dataDir, { recursive: true, force: true }))

describe('an interrupted run', () => {
  it('import stops before the next file and reports the files it did not attempt', async () => {
    const { io, stdout, stderr } = memoryIo({}, dataDir, false, interrupted)
    expect(await runCli(['import', V1, V1_LARGE, '--data-dir', dataDir], io)).toBe(1)
    expect(stdout()).toBe('imported 0 of 2 files (interrupted: 2 not attempted)\n')
    expect(stderr()).toBe('')
    expect(existsSync(join(dataDir, 'sessions')) ? readdirSync(join(dataDir, 'sessions')) : []).toEqual([])
    expect(existsSync(join(dataDir, '.lock'))).toBe(false)
  })

  it('migrate --apply stops before the next file, rewrites nothing and exits 1', async () => {
    const dir = join(dataDir, 'sessions', '--x--')
    mkdirSync(dir, { recursive: true })
    copyFileSync(V1, join(dir, 'a.jsonl'))
    const { io, stderr } = memoryIo({}, dataDir, false, interrupted)
    expect(await runCli(['migrate', dataDir, '--apply'], io)).toBe(1)
    expect(stderr()).toBe('session-store: interrupted\n')
    expect(readFileSync(join(dir, 'a.jsonl')).equals(readFileSync(V1))).toBe(true)
    expect(existsSync(join(dataDir, '.lock'))).toBe(false)
  })
})
