/**
 * Where a disk-full scenario keeps its DATA_DIR: a real, tiny tmpfs when this machine lets us
 * mount one (root, `mount -t tmpfs -o size=…`), else a temp directory on the simulated full disk
 * of `full-disk.ts`. Both fill up on demand and make room again.
 */
import { spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { installSimulatedDisk, type SimulatedDisk } from './full-disk.js'

export interface Volume {
  kind: 'tmpfs' | 'simulated'
  dataDir: string
  /** Counts short writes and ENOSPC refusals on this volume (also on tmpfs, by observation). */
  disk: SimulatedDisk
  /** Leaves (next to) no free space. */
  fill(): void
  /** Makes room again. */
  release(): void
  dispose(): void
}

export interface VolumeOptions {
  /** Simulated disk only: bytes left by `fill()` (default 100), so the next big write is short. */
  leave?: number
  /** Simulated disk only: which files are on the disk that fills (default: all). */
  affects?: (path: string) => boolean
}

/** A directory on the simulated disk (always available). */
export function simulatedVolume (options: VolumeOptions = {}): Volume {
  const root = mkdtempSync(join(tmpdir(), 'ss-full-'))
  const dataDir = join(root, 'data')
  mkdirSync(dataDir)
  const disk = installSimulatedDisk({ root: dataDir, affects: options.affects })
  return {
    kind: 'simulated',
    dataDir,
    disk,
    fill: () => { disk.free = options.leave ?? 100 },
    release: () => { disk.free = Number.POSITIVE_INFINITY },
    dispose: () => {
      disk.uninstall()
      rmSync(root, { recursive: true, force: true })
    },
  }
}

/** Why a tmpfs cannot be mounted here (tried once, then unmounted), or undefined when it can. */
export function tmpfsUnavailable (): string | undefined {
  if (process.platform !== 'linux') return `tmpfs is Linux only, this is ${process.platform}`
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root'
  const probe = mkdtempSync(join(tmpdir(), 'ss-tmpfs-probe-'))
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { encoding: 'utf8' })
    if (mounted.status !== 0) return `mount -t tmpfs failed: ${(mounted.stderr ?? mounted.error?.message ?? '').trim() || `exit ${mounted.status}`}`
    spawnSync('umount', [probe], { stdio: 'ignore' })
    return undefined
  } finally {
    rmSync(probe, { recursive: true, force: true })
  }
}

/** A real tmpfs of `sizeKiB`, or undefined when mounting is not permitted here. */
export function tmpfsVolume (sizeKiB = 1024): Volume | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined
  const mountPoint = mkdtempSync(join(tmpdir(), 'ss-tmpfs-'))
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=0700`, 'tmpfs', mountPoint], { stdio: 'ignore' })
  if (mounted.status !== 0) {
    rmSync(mountPoint, { recursive: true, force: true })
    return undefined
  }
  const dataDir = join(mountPoint, 'data')
  mkdirSync(dataDir)
  const filler = join(mountPoint, 'filler')
  // Observation only: an unlimited budget, so the counters show what the kernel did.
  const disk = installSimulatedDisk({ root: dataDir })
  return {
    kind: 'tmpfs',
    dataDir,
    disk,
    fill: () => {
      const fd = openSync(filler, 'a')
      const chunk = Buffer.alloc(64 * 1024, 0x2e)
      try {
        for (;;) writeSync(fd, chunk)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
      } finally {
        closeSync(fd)
      }
    },
    release: () => { unlinkSync(filler) },
    dispose: () => {
      disk.uninstall()
      spawnSync('umount', ['-l', mountPoint], { stdio: 'ignore' })
      rmSync(mountPoint, { recursive: true, force: true })
    },
  }
}
