/**
 * `npm run openapi`: writes the OpenAPI document generated from the route schemas to
 * openapi/openapi.json (STYLE.md §5), then the TypeScript types generated from it to
 * test/contract/openapi-types.d.ts. test/openapi.test.ts fails when the document and the routes
 * disagree, test/contract/openapi-types.test.ts when the types are stale.
 */
import { writeFile } from 'node:fs/promises'
import { buildApp } from '../src/app.js'
import { MemoryBlobStore } from '../src/blobs/index.js'
import { loadConfig } from '../src/config.js'
import { createRegistry } from '../src/registry/session-registry.js'
import { JsonlStore } from '../src/storage/jsonl/jsonl-store.js'
import { OPENAPI_TYPES, writeOpenapiTypes } from './openapi-types.js'

const target = new URL('../openapi/openapi.json', import.meta.url)

const config = loadConfig({ STORAGE: 'memory' })
const store = JsonlStore.inMemory(config.dataDir)
const blobs = new MemoryBlobStore()
const registry = createRegistry({ tenant: 'default', dataDir: config.dataDir, store, blobs, maxOpenSessions: config.maxOpenSessions })
const app = await buildApp({ config, store, blobs, registry })
await app.ready()
await writeFile(target, JSON.stringify(app.swagger(), null, 2) + '\n')
await app.close()
await registry.close()
await store.close()
process.stdout.write(`wrote ${target.pathname}\n`)
await writeOpenapiTypes()
process.stdout.write(`wrote ${OPENAPI_TYPES.pathname}\n`)
