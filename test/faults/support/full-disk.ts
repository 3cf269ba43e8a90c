/**
 * A disk that fills up, simulated at the syscall layer. Once installed, every `fs.write` on a
 * descriptor that `fs.open` returned for a file under `root` (and that `affects` accepts at the
 * time of the write) draws from one byte budget, `free`. A write larger than what is left writes only what is left (a
 * short write, as a real file system does when it runs out of blocks part-way) and every later
 * write fails with ENOSPC until `free` grows again. Other descriptors (stdout, sockets, files
 * elsewhere) pass straight through.
 *
 * It patches the `fs` module object, which is what the disk adapters call at call time
 * (src/storage/durable-fs.ts), so it works in vitest and in plain scripts alike. `fs.promises`
 * (whole-file `writeText`) is not covered: session appends and rewrites go through `fs.write`.
 */
import fs from 'node:fs'
import { resolve, sep } from 'node:path'

export interface SimulatedDisk {
  /** Bytes that can still be written; set it to make room again (Infinity = plenty). */
  free: number
  /** Writes on the disk that wrote fewer bytes than asked (budget or kernel). */
  shortWrites: number
  /** Writes on the disk that failed with ENOSPC (budget or kernel). */
  refusals: number
  /** Puts the real `fs.open`, `fs.close` and `fs.write` back. Idempotent. */
  uninstall(): void
}

export interface SimulatedDiskOptions {
  /** Only files under this directory are on the simulated disk. */
  root: string
  /** Initial budget in bytes (default Infinity). */
  free?: number
  /** Narrows the disk to some paths under `root` (default: all of them); asked at every write. */
  affects?: (path: string) => boolean
}

type Callback = (...args: unknown[]) => void
type Fn = (...args: unknown[]) => unknown

/** An ENOSPC error shaped like Node's own. */
export function enospc (syscall = 'write'): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, ${syscall}`), { code: 'ENOSPC', errno: -28, syscall })
}

export function installSimulatedDisk (options: SimulatedDiskOptions): SimulatedDisk {
  const root = resolve(options.root)
  const affects = options.affects ?? (() => true)
  const onDisk = new Map<number, string>()
  const real = { open: fs.open, close: fs.close, write: fs.write }
  const inside = (path: string): boolean => path === root || path.startsWith(root + sep)

  const disk: SimulatedDisk = {
    free: options.free ?? Number.POSITIVE_INFINITY,
    shortWrites: 0,
    refusals: 0,
    uninstall () {
      Object.assign(fs, real)
    },
  }

  const open = (...args: unknown[]): void => {
    const cb = args[args.length - 1] as Callback
    const path = resolve(String(args[0]))
    const wrapped = (err: unknown, fd: number): void => {
      if (err === null && inside(path)) onDisk.set(fd, path)
      cb(err, fd)
    }
    ;(real.open as unknown as Fn)(...args.slice(0, -1), wrapped)
  }

  const close = (fd: number, cb: Callback): void => {
    onDisk.delete(fd)
    real.close(fd, cb)
  }

  const write = (...args: unknown[]): void => {
    const fd = args[0] as number
    const buf = args[1]
    // Only the (fd, buffer, offset, length, position, cb) form is budgeted; it is the one the
    // disk adapters use. Anything else, or any other descriptor, is passed through unchanged.
    const path = onDisk.get(fd)
    if (path === undefined || !affects(path) || !(buf instanceof Uint8Array) || args.length !== 6) {
      ;(real.write as unknown as Fn)(...args)
      return
    }
    const [, , offset, length, position, cb] = args as [number, Uint8Array, number, number, number | null, Callback]
    if (disk.free <= 0) {
      disk.refusals++
      process.nextTick(cb, enospc())
      return
    }
    real.write(fd, buf, offset, Math.min(length, disk.free), position, (err, written) => {
      if (err === null) disk.free -= written
      if (err === null && written < length) disk.shortWrites++
      if (err?.code === 'ENOSPC') disk.refusals++
      cb(err, written, buf)
    })
  }

  Object.assign(fs, { open, close, write })
  return disk
}
