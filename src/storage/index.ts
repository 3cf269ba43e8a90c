/**
 * SPEC.md §10's file interface: the interfaces, the disk and memory adapters and the path
 * guard. Callers pick an adapter once, through `createStorage`, and never branch on which one
 * they got. A server stores its sessions through the store seam instead (store.ts, opened by
 * `openStore` in open-store.ts), which keeps these adapters inside its disk and memory store.
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

/** Which store backs a server's sessions (`STORAGE`): files, a process-local map, or PostgreSQL. */
export type StorageKind = 'disk' | 'memory' | 'postgres'

/** A fresh storage of the given kind; `memory` starts empty and is private to the returned instance. */
export function createStorage (kind: 'disk' | 'memory'): SessionStorage {
  return kind === 'disk' ? new FileSessionStorage() : new MemorySessionStorage()
}
