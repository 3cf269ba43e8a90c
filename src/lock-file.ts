/**
 * Lock files: created exclusively (O_EXCL), holding the owner's pid. A lock whose pid is no
 * longer alive (gone, or a zombie not yet reaped by its parent) is stale and is replaced.
 * One server owns a DATA_DIR (API.md "Running") through `DATA_DIR/.lock` (`acquireLock`);
 * short read-modify-writes of a shared file wait their turn on `<file>.lock` (`withLockFile`).
 */
import { readFileSync, unlinkSync } from 'node:fs'
import { mkdir, open, readFile, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { DataDirLocked, FileLockTimeout, hasCode } from './errors.js'

export interface LockFile {
  readonly path: string
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): Promise<void>
  /** `release` for `process.on('exit')`, where nothing asynchronous runs. */
  releaseSync(): void
}

/** Rounds of create-or-inspect before giving up; each round removes at most one stale lock. */
const ATTEMPTS = 5
/** How long a lock file may stay empty while its creator writes the pid. */
const EMPTY_GRACE_MS = 200

/** How long `withLockFile` waits for another holder before giving up, in ms. */
export const LOCK_WAIT_MS = 10_000

/**
 * The state letter of `/proc/<pid>/stat` (`R`, `S`, `Z`, …), `undefined` where there is no
 * procfs (not Linux) or the process is gone. The name in parentheses may itself hold `)`.
 */
function procState (pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.charAt(stat.lastIndexOf(')') + 2) || undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a process with this pid is alive (EPERM: it exists but belongs to someone else). A
 * zombie is dead: it answers `kill -0` until its parent reaps it, which right after `kill -9`
 * of a server under a supervisor that has not reaped it yet would refuse the restart.
 */
export function isProcessAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    if (!hasCode(err, 'EPERM')) return false
  }
  const state = procState(pid)
  return state !== 'Z' && state !== 'X'
}

function parsePid (text: string): number | undefined {
  const pid = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
}

async function readText (path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return undefined
    throw err
  }
}

/** The lock's content once its pid is written (or the grace period ran out), `undefined` if gone. */
async function readSettled (path: string): Promise<string | undefined> {
  const deadline = Date.now() + EMPTY_GRACE_MS
  let text = await readText(path)
  while (text !== undefined && parsePid(text) === undefined && Date.now() < deadline) {
    await sleep(20)
    text = await readText(path)
  }
  return text
}

async function tryCreate (path: string, pid: number): Promise<boolean> {
  try {
    const fh = await open(path, 'wx')
    try {
      await fh.writeFile(`${pid}\n`)
      await fh.sync()
    } finally {
      await fh.close()
    }
    return true
  } catch (err) {
    if (hasCode(err, 'EEXIST')) return false
    throw err
  }
}

function ownedLock (path: string, pid: number): LockFile {
  let released = false
  const ours = (text: string | undefined): boolean => text !== undefined && parsePid(text) === pid
  return {
    path,
    async release () {
      if (released) return
      released = true
      if (ours(await readText(path))) await unlink(path).catch(() => {})
    },
    releaseSync () {
      if (released) return
      released = true
      try {
        if (ours(readFileSync(path, 'utf8'))) unlinkSync(path)
      } catch {}
    },
  }
}

/**
 * Takes the lock at `path` for `pid`, creating its directory.
 * @throws DataDirLocked (`SS_DATA_DIR_LOCKED`) when a live process other than `pid` holds it.
 */
export async function acquireLock (path: string, pid: number = process.pid): Promise<LockFile> {
  await mkdir(dirname(path), { recursive: true })
  let holder: number | undefined
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (await tryCreate(path, pid)) return ownedLock(path, pid)
    const text = await readSettled(path)
    if (text === undefined) continue
    holder = parsePid(text)
    if (holder !== undefined && holder !== pid && isProcessAlive(holder)) {
      throw new DataDirLocked(dirname(path), holder, path)
    }
    // Stale (dead pid, our own pid from a previous run, or never written). Remove it only if
    // it is unchanged, so that a lock another starter just took is left alone.
    if (await readText(path) === text) await unlink(path).catch(() => {})
  }
  throw new DataDirLocked(dirname(path), holder ?? 0, path)
}

/**
 * Runs `fn` while holding the lock file `lockPath`, waiting (with backoff) while another live
 * process holds it; stale locks are replaced. Every writer of one shared file (the token file:
 * the server and the CLI) goes through the same lock path, so read-modify-writes never
 * interleave across processes. Callers serialize within their own process first: a lock naming
 * our own pid counts as stale.
 * @throws FileLockTimeout (`SS_FILE_LOCK_TIMEOUT`, 503) after `waitMs`.
 */
export async function withLockFile<T> (lockPath: string, fn: () => Promise<T>, waitMs: number = LOCK_WAIT_MS): Promise<T> {
  const deadline = Date.now() + waitMs
  let lock: LockFile | undefined
  for (let delay = 2; lock === undefined; delay = Math.min(delay * 2, 50)) {
    try {
      lock = await acquireLock(lockPath)
    } catch (err) {
      if (!hasCode(err, 'SS_DATA_DIR_LOCKED')) throw err
      if (Date.now() >= deadline) throw new FileLockTimeout(lockPath, { cause: err })
      await sleep(delay + Math.random() * delay)
    }
  }
  try {
    return await fn()
  } finally {
    await lock.release()
  }
}
