/**
 * Commands that work on a DATA_DIR directly (no server) hold its lock while they work, exactly
 * as a server does (API.md "Running": one process owns a DATA_DIR), so they never run beside
 * a server or each other on the same directory.
 */
import { readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { acquireLock } from '../lock-file.js'
import { CliError, codeOf, messageOf } from './args.js'

/**
 * Resolves `dir` against `cwd`; with `mustExist`, fails unless it is an existing directory
 * (so that a typo does not create an empty DATA_DIR).
 */
export function resolveDataDir (cwd: string, dir: string, mustExist: boolean): string {
  const path = resolve(cwd, dir)
  if (mustExist && statSync(path, { throwIfNoEntry: false })?.isDirectory() !== true) {
    throw new CliError(`DATA_DIR ${path} is not a directory`)
  }
  return path
}

/**
 * Runs `fn` holding `dataDir/.lock`. The lock is released afterwards, and also when the process
 * exits early (a second Ctrl-C).
 * @throws CliError when a live process (a server) holds the lock; `hint` says what to do instead.
 */
export async function withDataDirLock<T> (dataDir: string, hint: string, fn: () => Promise<T>): Promise<T> {
  const release = await lockDataDir(dataDir, hint)
  try {
    return await fn()
  } finally {
    await release()
  }
}

/**
 * Takes `dataDir/.lock` until the returned function is called (or the process exits), for a
 * command that holds the lock across more than one call.
 * @throws CliError when a live process (a server) holds the lock; `hint` says what to do instead.
 */
export async function lockDataDir (dataDir: string, hint: string): Promise<() => Promise<void>> {
  refuseOwnPid(join(dataDir, '.lock'))
  let lock
  try {
    lock = await acquireLock(join(dataDir, '.lock'))
  } catch (err) {
    if (codeOf(err) === 'SS_DATA_DIR_LOCKED') throw new CliError(`${messageOf(err)}; ${hint}`)
    throw err
  }
  const releaseOnExit = (): void => { lock.releaseSync() }
  process.once('exit', releaseOnExit)
  return async () => {
    process.off('exit', releaseOnExit)
    await lock.release()
  }
}

/**
 * `acquireLock` treats a lock naming our own pid as left over from an earlier run of ours. A
 * short-lived CLI process never took this lock before, so such a lock comes from another PID
 * namespace: in `docker compose run`, the CLI is PID 1 and so is the server in its own
 * container. Taking it over could put two writers on one DATA_DIR, so refuse instead.
 */
function refuseOwnPid (path: string): void {
  let text: string
  try {
    text = readFileSync(path, 'utf8').trim()
  } catch {
    return
  }
  if (text === String(process.pid)) {
    throw new CliError(`DATA_DIR lock ${path} names pid ${text}, which is this process: probably a server in ` +
      'another container; stop it, or delete the lock file if no server uses this DATA_DIR')
  }
}
