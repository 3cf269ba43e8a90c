/**
 * A real listening server for the client tests (buildApp via test/helpers/app.ts), over memory
 * storage or over the disk storage of a given DATA_DIR, plus message shorthands.
 */
import { storeStack } from '../helpers/stack.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { App } from '../../src/app.js'
import { FileBlobStore, MemoryBlobStore } from '../../src/blobs/index.js'
import type { AgentMessage } from '../../src/client/index.js'
import { FileSessionStorage, MemorySessionStorage } from '../../src/storage/index.js'
import { buildTestApp, testConfig } from '../helpers/app.js'

export interface TestServer {
  app: App
  baseUrl: string
  port: number
  close: () => Promise<void>
}

export interface ServerOptions {
  /** Disk storage under this DATA_DIR; default memory storage. */
  dataDir?: string
  /** Default: any free port. */
  port?: number
}

/** Builds the app over the chosen storage and listens on 127.0.0.1. */
export async function listenTestServer (options: ServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? testConfig().dataDir
  const disk = options.dataDir !== undefined
  const storage = disk ? new FileSessionStorage() : new MemorySessionStorage()
  const blobs = disk ? new FileBlobStore(join(dataDir, 'blobs')) : new MemoryBlobStore()
  const stack = storeStack({ dataDir, storage, blobs })
  const app = await buildTestApp({ store: stack.store, blobs, registry: stack.registry, config: { dataDir, storage: disk ? 'disk' : 'memory' } })
  const baseUrl = await app.listen({ port: options.port ?? 0, host: '127.0.0.1' })
  await stack.store.ready()
  return { app, baseUrl, port: Number(new URL(baseUrl).port), close: async () => { await app.close(); await stack.close() } }
}

/** A fresh temporary DATA_DIR and its removal. */
export function tempDataDir (prefix = 'ss-client-'): { dir: string, remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, remove: () => { rmSync(dir, { recursive: true, force: true }) } }
}

export function user (text = 'hi'): AgentMessage {
  return { role: 'user', content: text, timestamp: 1_773_500_000_000 }
}

export function assistant (text = 'ok'): AgentMessage {
  return {
    role: 'assistant',
    content: [{ type: 'text', text }],
    provider: 'anthropic',
    model: 'claude-test',
    usage: { input: 1, output: 1 },
    stopReason: 'stop',
    timestamp: 1_773_500_000_001,
  }
}

/** Resolves once `condition` holds, polling every 10 ms; rejects after `timeoutMs`. */
export async function until (condition: () => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
