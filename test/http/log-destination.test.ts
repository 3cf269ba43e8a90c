/**
 * The process log writes the lines of one event-loop turn with one write call, and loses none at
 * exit, nor writes them out of order: neither at `process.exit` nor at an uncaught exception, in
 * the turn that logged or after earlier turns whose lines were already handed over.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { processLogger } from '../../src/http/request-log.js'

const REQUEST_LOG = fileURLToPath(new URL('../../src/http/request-log.ts', import.meta.url))

let dir: string
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ss-log-')) })
afterEach(async () => {
  vi.restoreAllMocks()
  await rm(dir, { recursive: true, force: true })
})

const linesOf = (text: string): Array<{ msg: string, n?: number }> =>
  text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { msg: string, n?: number })

describe('the process log', () => {
  it('writes the lines of one turn with one write call, in order', async () => {
    const path = join(dir, 'log')
    const fd = fs.openSync(path, 'w')
    const writes = vi.spyOn(fs, 'writeSync')
    const log = processLogger('info', fd)
    for (let n = 0; n < 100; n++) log.info({ n }, 'line')
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise<void>((resolve, reject) => { log.flush((err) => { if (err) reject(err); else resolve() }) })
    for (let i = 0; i < 50 && linesOf(await readFile(path, 'utf8')).length < 100; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(writes).toHaveBeenCalledTimes(1)
    expect(linesOf(await readFile(path, 'utf8')).map((l) => l.n)).toEqual([...Array(100).keys()])
  })

  // 2,000 lines a turn is more than one batch (64 KiB), so each turn hands lines over mid-turn too.
  for (const [end, status] of [['process.exit(3)', 3], ["throw new Error('boom')", 1]] as const) {
    it(`keeps every line, in order, logged up to the turn that ends the process (${end})`, () => {
      const script = `
        const { processLogger } = await import(${JSON.stringify(REQUEST_LOG)})
        const log = processLogger('info')
        process.on('exit', () => { log.info({ n: 6000 }, 'line') })
        const turn = (t) => { for (let n = t * 2000; n < (t + 1) * 2000; n++) log.info({ n }, 'line') }
        turn(0)
        setImmediate(() => {
          turn(1)
          setImmediate(() => { turn(2); ${end} })
        })`
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
      expect(child.status, child.stderr).toBe(status)
      expect(linesOf(child.stdout).map((l) => l.n)).toEqual([...Array(6001).keys()])
    })
  }
})
