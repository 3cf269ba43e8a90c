/** The DATA_DIR lock as CLI commands hold it while working directly on a DATA_DIR. */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { withDataDirLock } from '../../src/cli/data-dir.js'
import { acquireLock } from '../../src/lock-file.js'

let dataDir: string
beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'ss-cli-lock-')) })
afterEach(() => rmSync(dataDir, { recursive: true, force: true }))

describe('withDataDirLock', () => {
  it('holds DATA_DIR/.lock while the work runs, so a server cannot start, and removes it afterwards', async () => {
    const lock = join(dataDir, '.lock')
    const result = await withDataDirLock(dataDir, 'hint', async () => {
      expect(readFileSync(lock, 'utf8').trim()).toBe(String(process.pid))
      // What a server starting now would do, as another process (pid 1 is always alive).
      await expect(acquireLock(lock, 1)).rejects.toMatchObject({ code: 'SS_DATA_DIR_LOCKED' })
      return 42
    })
    expect(result).toBe(42)
    expect(existsSync(lock)).toBe(false)
  })

  it('releases the lock when the work fails', async () => {
    await expect(withDataDirLock(dataDir, 'hint', async () => { throw new Error('boom') })).rejects.toThrow('boom')
    expect(existsSync(join(dataDir, '.lock'))).toBe(false)
  })

  it('refuses a lock held by a live process, adding the hint', async () => {
    writeFileSync(join(dataDir, '.lock'), '1\n')
    let ran = false
    await expect(withDataDirLock(dataDir, 'use --server', async () => { ran = true }))
      .rejects.toThrow(/is in use by process 1 .*; use --server$/)
    expect(ran).toBe(false)
    expect(readFileSync(join(dataDir, '.lock'), 'utf8')).toBe('1\n')
  })

  it('refuses a lock naming its own pid (a server in another PID namespace) instead of taking it over', async () => {
    writeFileSync(join(dataDir, '.lock'), `${process.pid}\n`)
    let ran = false
    await expect(withDataDirLock(dataDir, 'hint', async () => { ran = true }))
      .rejects.toThrow(`names pid ${process.pid}, which is this process`)
    expect(ran).toBe(false)
    expect(readFileSync(join(dataDir, '.lock'), 'utf8')).toBe(`${process.pid}\n`)
  })

  it('takes over a stale lock of a dead process', async () => {
    writeFileSync(join(dataDir, '.lock'), '2147483646\n')
    expect(await withDataDirLock(dataDir, 'hint', async () => readFileSync(join(dataDir, '.lock'), 'utf8').trim())).toBe(String(process.pid))
  })
})
