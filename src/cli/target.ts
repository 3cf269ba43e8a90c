/**
 * Where `import` and `export` work: a running server (`--server <url>`, over HTTP) or a
 * DATA_DIR on this machine (`--data-dir <dir>`, through the same registry code the server runs,
 * holding the DATA_DIR lock). Exactly one of the two is required.
 */
import { join } from 'node:path'
import { DEFAULT_TENANT } from '../auth/tokens.js'
import { FileBlobStore } from '../blobs/index.js'
import { SessionNotFound } from '../errors.js'
import { createRegistry } from '../registry/session-registry.js'
import { silentLogger } from '../session/logger.js'
import { FileSessionStorage } from '../storage/index.js'
import { JsonlStore } from '../storage/jsonl/jsonl-store.js'
import { stringFlag, UsageError, type Values } from './args.js'
import { resolveDataDir, withDataDirLock } from './data-dir.js'
import { serverOf, withRemote, type ImportedSession, type Server } from './remote.js'

/** The options every command with a target takes, for `parseArgs`. */
export const TARGET_OPTIONS = {
  server: { type: 'string' },
  'data-dir': { type: 'string' },
} as const

const LOCK_HINT = 'stop that server or pass --server <url> to go through it'

/** A server (base URL and token), or an absolute DATA_DIR path. */
export type Target = ({ kind: 'server' } & Server) | { kind: 'data-dir', dir: string }

/**
 * The target named by `--server` or `--data-dir`.
 * @throws UsageError when both or neither are given, or the URL is not http(s).
 */
export function parseTarget (values: Values, cwd: string, env: Record<string, string | undefined>): Target {
  const server = stringFlag(values, 'server')
  const dataDir = stringFlag(values, 'data-dir')
  if (server !== undefined && dataDir !== undefined) throw new UsageError('give either --server or --data-dir, not both')
  if (server !== undefined) return { kind: 'server', ...serverOf(server, env) }
  if (dataDir !== undefined) return { kind: 'data-dir', dir: resolveDataDir(cwd, dataDir, false) }
  throw new UsageError('missing --server <url> or --data-dir <dir>')
}

/** Imports session files one at a time, as `POST /v1/sessions/import` does. */
export interface Importer {
  import(bytes: Uint8Array, newId: boolean): Promise<ImportedSession>
}

/**
 * Runs `fn` with an importer for `target`. On a DATA_DIR the lock is held and a registry is
 * open for the whole run; it is closed (every session flushed and fsynced) before the lock goes.
 */
export async function withImporter<T> (target: Target, fn: (importer: Importer) => Promise<T>): Promise<T> {
  if (target.kind === 'server') {
    return await withRemote(target, async (remote) => await fn({ import: async (bytes, newId) => await remote.importJsonl(bytes, newId) }))
  }
  const dir = target.dir
  return await withDataDirLock(dir, LOCK_HINT, async () => {
    const store = openDiskStore(dir)
    const registry = createRegistry({ tenant: DEFAULT_TENANT, dataDir: dir, store, blobs: new FileBlobStore(join(dir, 'blobs')), logger: silentLogger })
    try {
      return await fn({
        async import (bytes, newId) {
          const view = await registry.import(new TextDecoder().decode(bytes), { newId })
          return { id: view.header.id, entryCount: view.entryCount }
        },
      })
    } finally {
      await registry.close()
      await store.close()
    }
  })
}

/** The disk store of `dir`, its index checked against the files. */
function openDiskStore (dir: string): JsonlStore {
  return JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })
}

/**
 * The stored bytes of session `id`. A DATA_DIR is read as it is, under its lock: the file is
 * found by header id through the server's index, and nothing is migrated or written.
 * @throws SessionNotFound (`SS_SESSION_NOT_FOUND`) for an unknown id.
 */
export async function exportSession (target: Target, id: string): Promise<Uint8Array> {
  if (target.kind === 'server') return await withRemote(target, async (remote) => await remote.exportJsonl(id))
  const dir = resolveDataDir(target.dir, '.', true) // must exist: taking the lock would create it
  return await withDataDirLock(dir, LOCK_HINT, async () => {
    const store = openDiskStore(dir)
    try {
      const stored = await store.read(DEFAULT_TENANT, id)
      if (stored === undefined) throw new SessionNotFound(id)
      let text = ''
      for await (const chunk of stored.text) text += chunk
      return new Uint8Array(Buffer.from(text, 'utf8'))
    } finally {
      await store.close()
    }
  })
}
