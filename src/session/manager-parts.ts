/**
 * What the manager's own files (session-lifecycle.ts, session-factories.ts) use of a manager:
 * its surroundings and its fields. They take a manager through this shape, so that none of them
 * imports session-manager.ts, which imports them.
 */
import type { BlobStore } from '../blobs/types.js'
import type { SessionStorage } from '../storage/types.js'
import type { Logger } from './logger.js'
import type { SessionState } from './session-state.js'
import type { WriteQueue } from './write-queue.js'

/** What a manager needs from its surroundings, resolved once by the factories. */
export interface ManagerEnv {
  /** Absolute `DATA_DIR`; every client-derived path must resolve inside it (§2.1). */
  dataDir: string
  storage: SessionStorage
  blobs: BlobStore
  log: Logger
  /** Client-supplied terminal id; enables breadcrumbs (§11.3). */
  terminalId?: string
  /** False for `inMemory` managers: nothing is ever written. */
  persist: boolean
}

/** A manager as its lifecycle operations and factories see it (session-manager.ts has the docs). */
export interface ManagerParts {
  readonly env: ManagerEnv
  state: SessionState
  readonly queue: WriteQueue
  sessionFile: string | undefined
  sessionDir: string
  cwd: string
  sessionName: string | undefined
  flushed: boolean
  startFresh (parentSession?: string, path?: string, id?: string): void
  breadcrumb (): Promise<void>
  getSessionId (): string
  setSessionName (name: string): Promise<void>
}

/** Makes a manager of the session-manager.ts class (passed in by it: no import of it needed). */
export type MakeManager<M extends ManagerParts> = (env: ManagerEnv, cwd: string, sessionDir: string) => M
