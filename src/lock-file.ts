/**
 * One server owns a DATA_DIR (API.md "Running"): `DATA_DIR/.lock` is created exclusively and
 * holds the owner's pid. A lock whose pid is no longer alive is stale and is replaced.
 */
import { readFileSync, unlinkSync } from 'node:fs'
import { mkdir, open, readFile, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { DataDirLocked, hasCode } from './errors.js'

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

/** Whether a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function isProcessAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return hasCode(err, 'EPERM')
  }
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
