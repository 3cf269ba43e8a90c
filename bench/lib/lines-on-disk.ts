/**
 * Counting what a benchmark's server left on disk.
 */
import { closeSync, openSync, readSync } from 'node:fs'
import { join } from 'node:path'

/** Newline-terminated lines in `files` under `dir`, counted a chunk at a time (files may pass 512 MB). */
export function linesOnDisk (dir: string, files: string[]): number {
  let lines = 0
  const buf = Buffer.allocUnsafe(1 << 20)
  for (const file of files) {
    const fd = openSync(join(dir, file), 'r')
    try {
      for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) {
        for (let at = buf.indexOf(10); at !== -1 && at < n; at = buf.indexOf(10, at + 1)) lines++
      }
    } finally {
      closeSync(fd)
    }
  }
  return lines
}
