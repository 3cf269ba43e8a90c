/**
 * Small durability primitives over Node's `fs`, shared by the disk adapters (session storage and
 * blob store). Every call goes through the `fs` module object at call time, so tests can spy on
 * `fs.fdatasync`, `fs.fsync`, `fs.write` … and see exactly what reaches the kernel.
 * @see SPEC.md §8.4, §8.6, §9.4, §10.3
 */
import fs from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ShortWrite } from '../errors.js'

/** Error codes with which platforms refuse to open or fsync a directory (fsync on dirs unsupported). */
const DIR_SYNC_UNSUPPORTED = new Set(['EISDIR', 'EINVAL', 'ENOTSUP', 'EOPNOTSUPP'])

function isDirSyncUnsupported (err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  if (code === undefined) return false
  // Windows cannot fsync a directory handle at all and answers EPERM.
  return DIR_SYNC_UNSUPPORTED.has(code) || (code === 'EPERM' && process.platform === 'win32')
}

/** `fs.open` as a promise; `flags` may be a string or numeric `O_*` flags. */
export function openFd (path: string, flags: string | number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.open(path, flags, (err, fd) => { err === null ? resolve(fd) : reject(err) })
  })
}

/** One `write(2)` at the current position (or the end with `O_APPEND`); resolves the byte count. */
export function writeFd (fd: number, buf: Uint8Array, offset: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.write(fd, buf, offset, length, null, (err, written) => { err === null ? resolve(written) : reject(err) })
  })
}

export function fdatasyncFd (fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.fdatasync(fd, (err) => { err === null ? resolve() : reject(err) })
  })
}

export function fsyncFd (fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.fsync(fd, (err) => { err === null ? resolve() : reject(err) })
  })
}

export function closeFd (fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.close(fd, (err) => { err === null || err === undefined ? resolve() : reject(err) })
  })
}

export function ftruncateFd (fd: number, length: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.ftruncate(fd, length, (err) => { err === null || err === undefined ? resolve() : reject(err) })
  })
}

/** The file's current size in bytes (`fstat`). */
export function sizeOfFd (fd: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.fstat(fd, (err, stats) => { err === null ? resolve(stats.size) : reject(err) })
  })
}

/**
 * Writes every byte of `buf` to `fd`, looping over partial writes. A write that reports zero
 * bytes is the error `Short write` (`SS_SHORT_WRITE`). Not durable: sync afterwards.
 * `progress.bytes` counts the bytes of `buf` that reached the file, also when it rejects.
 */
export async function writeAll (fd: number, buf: Uint8Array, progress = { bytes: 0 }): Promise<void> {
  while (progress.bytes < buf.length) {
    const written = await writeFd(fd, buf, progress.bytes, buf.length - progress.bytes)
    if (written <= 0) throw new ShortWrite()
    progress.bytes += written
  }
}

/**
 * `writeAll` that takes its bytes back when it fails: if part of `buf` reached the file before
 * the error (a short write, then ENOSPC), the file is truncated to its length before this call
 * and fdatasync'ed, so it never ends in a piece of `buf`. Rejects with the write's own error.
 *
 * Costs nothing on success: the old length is computed only on failure, as the size now minus
 * the bytes written. That assumes `fd` is the file's only writer and writes at its end
 * (`O_APPEND`, or a file written front to back), which holds for session files (one process per
 * DATA_DIR, one writer per file). If the undo itself fails, the file keeps the fragment; it
 * never ends in `"\n"`, so the loader treats it as a torn last line (SPEC.md §8.8).
 *
 * Every append of a session goes through here, so the loop runs on `fs.write` callbacks under
 * one promise: a whole write costs one promise, not one per step of an async loop.
 */
export function writeAllOrUndo (fd: number, buf: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    let bytes = 0
    const fail = (err: Error): void => {
      if (bytes === 0) reject(err)
      else undoTail(fd, bytes).catch(() => {}).then(() => { reject(err) }, reject)
    }
    const written = (err: NodeJS.ErrnoException | null, n: number): void => {
      if (err !== null) return fail(err)
      if (n <= 0) return fail(new ShortWrite())
      bytes += n
      if (bytes < buf.length) next()
      else resolve()
    }
    const next = (): void => {
      try {
        fs.write(fd, buf, bytes, buf.length - bytes, null, written)
      } catch (err) {
        fail(err as Error)
      }
    }
    if (buf.length === 0) resolve()
    else next()
  })
}

/** Cuts the last `bytes` bytes off the file behind `fd` and makes the cut durable. */
async function undoTail (fd: number, bytes: number): Promise<void> {
  const size = await sizeOfFd(fd)
  await ftruncateFd(fd, Math.max(0, size - bytes))
  await fdatasyncFd(fd)
}

/**
 * Makes the entries of directory `dir` durable (open read-only, fsync, close). Resolves without
 * syncing only on platforms where directories cannot be fsynced; ENOENT and other errors reject.
 */
export async function syncDir (dir: string): Promise<void> {
  let fd: number
  try {
    fd = await openFd(dir, 'r')
  } catch (err) {
    if (isDirSyncUnsupported(err)) return
    throw err
  }
  try {
    await fsyncFd(fd)
  } catch (err) {
    if (!isDirSyncUnsupported(err)) throw err
  } finally {
    await closeFd(fd).catch(() => {})
  }
}

/** Synchronous `syncDir`, same error policy. */
export function syncDirSync (dir: string): void {
  let fd: number
  try {
    fd = fs.openSync(dir, 'r')
  } catch (err) {
    if (isDirSyncUnsupported(err)) return
    throw err
  }
  try {
    fs.fsyncSync(fd)
  } catch (err) {
    if (!isDirSyncUnsupported(err)) throw err
  } finally {
    try { fs.closeSync(fd) } catch {}
  }
}

/**
 * The directories whose entries changed when `mkdir -p target` created `first` and everything
 * below it down to `target`: the parent of each created directory, deepest first.
 */
function parentsOfCreated (first: string, target: string): string[] {
  const top = resolve(first)
  const parents: string[] = []
  let cur = resolve(target)
  for (;;) {
    const parent = dirname(cur)
    parents.push(parent)
    if (cur === top || parent === cur) return parents
    cur = parent
  }
}

/** Creates `dir` recursively if missing, then fsyncs the parent of every directory it created. */
export function ensureDirDurableSync (dir: string): void {
  const first = fs.mkdirSync(dir, { recursive: true })
  if (first === undefined) return
  for (const parent of parentsOfCreated(first, dir)) syncDirSync(parent)
}

/** Async `ensureDirDurableSync`. */
export async function ensureDirDurable (dir: string): Promise<void> {
  const first = await fs.promises.mkdir(dir, { recursive: true })
  if (first === undefined) return
  for (const parent of parentsOfCreated(first, dir)) await syncDir(parent)
}
