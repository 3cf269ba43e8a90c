/**
 * A storage wrapper for group-commit tests: counts writer writes and fsyncs, makes both slow
 * like a disk, and records how much of each file was durable when.
 */
import type { SessionStorage, SessionStorageWriter } from '../../src/storage/types.js'

export interface CountingStorage {
  storage: SessionStorage
  writes: number
  fsyncs: number
  /** Path → content length (UTF-16 units) covered by the latest completed fsync. */
  synced: Map<string, number>
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

export function countingStorage (inner: SessionStorage, delayMs = 5): CountingStorage {
  const counts: CountingStorage = { storage: inner, writes: 0, fsyncs: 0, synced: new Map() }
  counts.storage = new Proxy(inner, {
    get (target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (prop !== 'openWriter' || typeof value !== 'function') {
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
      }
      return (path: string, options: Parameters<SessionStorage['openWriter']>[1]): SessionStorageWriter => {
        const writer = target.openWriter(path, options)
        return {
          writeLine: async (line) => {
            counts.writes++
            await sleep(delayMs)
            await writer.writeLine(line)
          },
          flush: async () => { await writer.flush() },
          fsync: async () => {
            counts.fsyncs++
            const length = (await target.readText(path)).length
            await sleep(delayMs)
            await writer.fsync()
            counts.synced.set(path, Math.max(counts.synced.get(path) ?? 0, length))
          },
          close: async () => { await writer.close() },
          getError: () => writer.getError(),
        }
      }
    },
  })
  return counts
}
