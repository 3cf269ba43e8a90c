/**
 * `npm run openapi`: writes the OpenAPI document generated from the route schemas to
 * openapi/openapi.json (STYLE.md §5). test/openapi.test.ts fails when the two disagree.
 */
import { writeFile } from 'node:fs/promises'
import { buildApp } from '../src/app.js'
import { MemoryBlobStore } from '../src/blobs/index.js'
import { loadConfig } from '../src/config.js'
import { createRegistry } from '../src/registry/session-registry.js'
import { MemorySessionStorage } from '../src/storage/index.js'

const target = new URL('../openapi/openapi.json', import.meta.url)

const config = loadConfig({ STORAGE: 'memory' })
const storage = new MemorySessionStorage()
const blobs = new MemoryBlobStore()
const registry = createRegistry({ dataDir: config.dataDir, storage, blobs, maxOpenSessions: config.maxOpenSessions })
const app = await buildApp({ config, storage, blobs, registry })
await app.ready()
await writeFile(target, JSON.stringify(app.swagger(), null, 2) + '\n')
await app.close()
await registry.close()
process.stdout.write(`wrote ${target.pathname}\n`)
