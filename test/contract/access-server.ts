/**
 * Servers for the access part of the contract suite: `buildApp` over memory storage with a
 * token file (tests/helpers/tokens.ts), listening on an ephemeral port, with the configuration
 * a test needs (a rate limit of 1, a tiny event-loop delay limit).
 */
import { storeStack } from '../helpers/stack.js'
import { buildApp } from '../../src/app.js'
import { MemoryBlobStore } from '../../src/blobs/index.js'
import type { Config } from '../../src/config.js'
import { testConfig } from '../helpers/app.js'
import { tokenFixture, type TokenFixture } from '../helpers/tokens.js'

export interface AccessServer {
  baseUrl: string
  tokens: TokenFixture
  close: () => Promise<void>
}

export async function startAccessServer (overrides: Partial<Config> = {}): Promise<AccessServer> {
  const tokens = await tokenFixture()
  const config = testConfig({ rateLimitMax: 0, maxEventLoopDelayMs: 0, ...overrides, authTokensFile: tokens.path })
  const blobs = new MemoryBlobStore()
  const stack = storeStack({ dataDir: config.dataDir, blobs })
  const app = await buildApp({ config, store: stack.store, blobs, registry: stack.registry, tokens: await tokens.load(), logger: false })
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })
  return {
    baseUrl,
    tokens,
    close: async () => {
      app.server.closeAllConnections()
      await app.close()
      await stack.close()
      tokens.cleanup()
    },
  }
}
