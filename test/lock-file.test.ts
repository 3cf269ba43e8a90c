import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { acquireLock, isProcessAlive } from '../src/lock-file.js'

/** A pid that belonged to a process that has exited. */
async function deadPid (): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''])
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid ?? 999_999
}

describe('DATA_DIR lock file', () => {
  let dir: string
  let path: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ss-lock-'))
    path = join(dir, 'data', '.lock')
  })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  /** Leaves a lock file as another process would: with its pid, or empty. */
  async function holdLock (pid: number | undefined): Promise<void> {
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, pid === undefined ? '' : `${pid}\n`)
  }

  it('creates the lock holding the pid and removes it on release', async () => {
    const lock = await acquireLock(path, 4242)
    expect(await readFile(path, 'utf8')).toBe('4242\n')
    await lock.release()
    await expect(readFile(path)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('refuses when a live process holds the lock', async () => {
    await holdLock(process.ppid)
    await expect(acquireLock(path, 4242)).rejects.toMatchObject({
      code: 'SS_DATA_DIR_LOCKED',
      message: expect.stringContaining(`in use by process ${process.ppid}`),
    })
    expect(await readFile(path, 'utf8')).toBe(`${process.ppid}\n`)
  })

  it('replaces a stale lock whose process is gone', async () => {
    const pid = await deadPid()
    expect(isProcessAlive(pid)).toBe(false)
    await holdLock(pid)
    const lock = await acquireLock(path, 4242)
    expect(await readFile(path, 'utf8')).toBe('4242\n')
    await lock.release()
  })

  it('replaces a lock that never got a pid', async () => {
    await holdLock(undefined)
    const lock = await acquireLock(path, 4242)
    expect(await readFile(path, 'utf8')).toBe('4242\n')
    await lock.release()
  })

  it('does not remove a lock that another process took over', async () => {
    const lock = await acquireLock(path, 4242)
    await writeFile(path, '777\n')
    await lock.release()
    expect(await readFile(path, 'utf8')).toBe('777\n')
  })
})
