/**
 * A session store and the default tenant's registry over it, as a server builds them: for the
 * tests that build their app (or only a registry) themselves. `close` closes both.
 */
import type { BlobStore } from '../../src/blobs/types.js'
import { createRegistry, type RegistryOptions, type SessionRegistry } from '../../src/registry/session-registry.js'
import type { Logger } from '../../src/session/logger.js'
import { FileSessionStorage, MemorySessionStorage, type SessionStorage } from '../../src/storage/index.js'
import { JsonlStore } from '../../src/storage/jsonl/jsonl-store.js'

export interface Stack {
  store: JsonlStore
  registry: SessionRegistry
  close: () => Promise<void>
}

export interface StackOptions extends Partial<Omit<RegistryOptions, 'store' | 'tenant' | 'dataDir' | 'blobs'>> {
  dataDir: string
  blobs: BlobStore
  /** Default: a fresh memory storage; a `FileSessionStorage` keeps the index on disk beside the files. */
  storage?: SessionStorage
  logger?: Logger
}

export function storeStack (options: StackOptions): Stack {
  const { dataDir, blobs, storage = new MemorySessionStorage(), ...rest } = options
  const store = storage instanceof FileSessionStorage
    ? JsonlStore.open({ dataDir, storage, logger: options.logger })
    : JsonlStore.inMemory(dataDir, storage, options.logger)
  const registry = createRegistry({ ...rest, tenant: 'default', dataDir, store, blobs })
  let closed: Promise<void> | undefined
  return {
    store,
    registry,
    close: async () => {
      closed ??= (async () => {
        await registry.close()
        await store.close()
      })()
      await closed
    },
  }
}
