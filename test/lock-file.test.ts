import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { acquireLock, isProcessAlive, withLockFile } from '../src/lock-file.js'

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

  it('replaces the lock of a dead process that is not reaped yet (a zombie answers kill -0)', async () => {
    // `sh` starts a short `sleep` in the background and becomes `sleep`, which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] })
    try {
      const pid = Number((await new Promise<Buffer>((resolve) => parent.stdout.once('data', resolve))).toString().trim())
      let state = ''
      for (let i = 0; i < 100 && state !== 'Z'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
        state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
      }
      expect(state).toBe('Z')
      expect(() => { process.kill(pid, 0) }).not.toThrow()
      expect(isProcessAlive(pid)).toBe(false)
      await holdLock(pid)
      const lock = await acquireLock(path, 4242)
      expect(await readFile(path, 'utf8')).toBe('4242\n')
      await lock.release()
    } finally {
      parent.kill()
    }
  })

  it('does not remove a lock that another process took over', async () => {
    const lock = await acquireLock(path, 4242)
    await writeFile(path, '777\n')
    await lock.release()
    expect(await readFile(path, 'utf8')).toBe('777\n')
  })
})

describe('withLockFile: one read-modify-write of a shared file at a time', () => {
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ss-lock-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  it('waits for a live holder, then gives up with 503 SS_FILE_LOCK_TIMEOUT, leaving its lock alone', async () => {
    const path = join(dir, 'tokens.json.lock')
    await writeFile(path, `${process.ppid}\n`)
    const started = Date.now()
    await expect(withLockFile(path, async () => 'ran', 150)).rejects.toMatchObject({ code: 'SS_FILE_LOCK_TIMEOUT', statusCode: 503 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(150)
    expect(await readFile(path, 'utf8')).toBe(`${process.ppid}\n`)
  })

  it('replaces the lock of a dead holder, runs, and removes its own lock', async () => {
    const path = join(dir, 'tokens.json.lock')
    await writeFile(path, `${await deadPid()}\n`)
    expect(await withLockFile(path, async () => await readFile(path, 'utf8'))).toBe(`${process.pid}\n`)
    await expect(readFile(path)).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
