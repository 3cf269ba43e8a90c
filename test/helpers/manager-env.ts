/**
 * The per-test set-up of the SessionManager suites: a fresh DATA_DIR over a spying file storage.
 * `env` and `spy` always stand for the running test's, so test bodies use them directly.
 */
import { afterEach, beforeEach } from 'vitest'
import { SessionManager } from '../../src/session/session-manager.js'
import type { SessionEntryBase } from '../../src/session/types.js'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import { makeSessionEnv, type SessionEnv } from './session-env.js'
import { spyStorage, type SpyStorage } from './spy-storage.js'

export interface ManagerEnv {
  env: SessionEnv
  spy: SpyStorage
  create(cwd?: string): Promise<SessionManager>
  open(path: string): Promise<SessionManager>
}

/** Registers the before/after hooks of the calling suite file and returns its handles. */
export function useManagerEnv (): ManagerEnv {
  let current: { env: SessionEnv, spy: SpyStorage } | undefined
  beforeEach(() => {
    const spy = spyStorage(new FileSessionStorage())
    current = { spy, env: makeSessionEnv(spy.storage) }
  })
  afterEach(() => { current?.env.cleanup() })
  const now = (): { env: SessionEnv, spy: SpyStorage } => {
    if (current === undefined) throw new Error('useManagerEnv handles are only valid inside a test')
    return current
  }
  const env = forward(() => now().env)
  return {
    env,
    spy: forward(() => now().spy),
    create: async (cwd = '/work/pi') => await SessionManager.create(cwd, undefined, env.storage, env.options),
    open: async (path) => await SessionManager.open(path, undefined, env.storage, env.options),
  }
}

export const ids = (entries: readonly SessionEntryBase[]): string[] => entries.map((e) => e.id)

/** An object that reads and writes through to whatever `target()` returns at that moment. */
function forward<T extends object> (target: () => T): T {
  return new Proxy({} as T, {
    get: (_, prop) => {
      const t = target()
      const value = Reflect.get(t, prop) as unknown
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value
    },
    set: (_, prop, value) => Reflect.set(target(), prop, value),
  })
}
