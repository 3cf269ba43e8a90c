/**
 * Shared set-up for the discovery tests: temp data dirs, tiny JSONL builders and mtime control.
 */
import fs from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import type { FileRecord } from '../../src/session/types.js'
import type { SessionStorage } from '../../src/storage/types.js'

/** A fresh `DATA_DIR` on disk, plus its removal. */
export function tempDataDir (): { dir: string, cleanup: () => void } {
  const dir = fs.mkdtempSync(join(os.tmpdir(), 'ss-discovery-'))
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

let counter = 0

/** A valid v3 header; `over` replaces or adds keys (`undefined` removes). */
export function header (over: FileRecord = {}): FileRecord {
  counter++
  return {
    type: 'session',
    version: 3,
    id: `sess-${counter}`,
    timestamp: '2026-03-14T15:04:07.123Z',
    cwd: '/work/pi',
    ...over,
  }
}

/** A `message` entry. */
export function msg (id: string, role: string, content: unknown, parentId: string | null = null): FileRecord {
  return { type: 'message', id, parentId, timestamp: '2026-03-14T15:05:00.000Z', message: { role, content } }
}

/** JSONL text of `records`, one compact line each, LF-terminated. */
export function jsonl (records: FileRecord[]): string {
  return records.map((r) => JSON.stringify(r) + '\n').join('')
}

/** Writes `records` to `path` through the storage under test. */
export function writeSession (storage: SessionStorage, path: string, records: FileRecord[]): string {
  storage.writeTextSync(path, jsonl(records))
  return path
}

/** Sets a disk file's mtime to `ms` (epoch milliseconds). */
export function setMtime (path: string, ms: number): void {
  const t = new Date(ms)
  fs.utimesSync(path, t, t)
}

/** A pino-shaped logger that records its warnings. */
export function recordingLog (): { warn: (obj: object, msg: string) => void, warnings: Array<{ obj: object, msg: string }> } {
  const warnings: Array<{ obj: object, msg: string }> = []
  return { warn: (obj, msg) => { warnings.push({ obj, msg }) }, warnings }
}

/**
 * `storage` with some members replaced; every other method is bound to the original object, so
 * adapters with `#private` fields keep working.
 */
export function override<S extends SessionStorage> (storage: S, overrides: Partial<SessionStorage>): S {
  return new Proxy(storage, {
    get (target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof SessionStorage]
      const value = Reflect.get(target, key, target) as unknown
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}
