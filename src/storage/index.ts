/**
 * The storage seam (SPEC.md §10): the interfaces, the disk and memory adapters and the path
 * guard. Callers pick an adapter once, through `createStorage` or, for a server (which may run on
 * PostgreSQL), `openStorage` (open-storage.ts), and never branch on which one they got.
 */
import { FileSessionStorage } from './file-session-storage.js'
import { MemorySessionStorage } from './memory-session-storage.js'
import type { SessionStorage } from './types.js'

export type { OpenWriterOptions, SessionStorage, SessionStorageWriter, StorageStat } from './types.js'
export { FileSessionStorage } from './file-session-storage.js'
export {
  MemorySessionStorage, type MemorySessionStorageOptions, type MemoryWriteOp
} from './memory-session-storage.js'
export { isInside, resolveInside } from './paths.js'

/**
 * Which adapter backs the sessions: the real file system, a process-local map, or PostgreSQL
 * (`PgSessionStorage`, opened through `openStorage` in open-storage.ts).
 */
export type StorageKind = 'disk' | 'memory' | 'postgres'

/** A fresh storage of the given kind; `memory` starts empty and is private to the returned instance. */
export function createStorage (kind: 'disk' | 'memory'): SessionStorage {
  return kind === 'disk' ? new FileSessionStorage() : new MemorySessionStorage()
}
