/**
 * Every fixture of test/fixtures round-trips through the SDK: imported over HTTP into a server
 * on disk, its entries and context read back equal what the local library makes of the same
 * file in another DATA_DIR. Both sides migrate v1 files and so mint entry ids at random: ids are
 * compared by position. The local side is read as stored — opened (migrated, rewritten with
 * SPEC.md §9 applied), closed and opened again — which is what the server serves after import.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FileBlobStore } from '../../src/blobs/index.js'
import { createClient, type SessionStoreClient } from '../../src/client/index.js'
import { SessionManager } from '../../src/session/session-manager.js'
import { listenTestServer, tempDataDir, type TestServer } from './helpers.js'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures')
const NAMES = readdirSync(FIXTURES).filter((name) => name.endsWith('.jsonl')).sort()

/** SPEC.md §12 scenarios 26 and 27: what the context of each fixture must hold. */
const KNOWN: Record<string, { messages: number, model: string }> = {
  'pi-v1-large-session.jsonl': { messages: 914, model: 'anthropic/claude-sonnet-4-5' },
  'pi-v1-before-compaction.jsonl': { messages: 446, model: 'anthropic/claude-opus-4-5' },
}

const serverData = tempDataDir('ss-client-fx-server-')
const localData = tempDataDir('ss-client-fx-local-')
let server: TestServer
let client: SessionStoreClient

beforeAll(async () => {
  server = await listenTestServer({ dataDir: serverData.dir })
  client = createClient({ baseUrl: server.baseUrl })
})
afterAll(async () => {
  await client.close()
  await server.close()
  serverData.remove()
  localData.remove()
})

/** Replaces every entry id (wherever it is referenced) by its position. */
function byPosition (value: unknown, ids: Map<string, string>): unknown {
  if (typeof value === 'string') return ids.get(value) ?? value
  if (Array.isArray(value)) return value.map((v) => byPosition(v, ids))
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, byPosition(v, ids)]))
}
const positions = (entries: Array<{ id: string }>): Map<string, string> => new Map(entries.map((e, i) => [e.id, `#${i}`]))

async function openLocal (name: string): Promise<{ entries: unknown[], context: unknown, lines: number }> {
  const dir = join(localData.dir, 'sessions', '--fixtures--')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, name)
  copyFileSync(join(FIXTURES, name), path)
  const options = { dataDir: localData.dir, blobs: new FileBlobStore(join(localData.dir, 'blobs')) }
  await (await SessionManager.open(path, undefined, undefined, options)).close()
  const m = await SessionManager.open(path, undefined, undefined, options)
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').length
  return { entries: m.getEntries(), context: m.buildSessionContext(), lines }
}

describe('fixtures round-trip through the SDK', () => {
  it('finds the fixtures', () => {
    expect(NAMES).toEqual(Object.keys(KNOWN).sort())
  })

  it.each(NAMES)('%s: imported entries and context equal the local library’s', async (name) => {
    const session = await client.importSession(readFileSync(join(FIXTURES, name), 'utf8'))
    const id = session.header.id
    expect(session.header.version).toBe(3)
    const entries = await client.allEntries(id)
    const context = await client.getContext(id)
    const local = await openLocal(name)

    expect(entries).toHaveLength(local.entries.length)
    expect(session.entryCount).toBe(entries.length)
    expect(byPosition(entries, positions(entries))).toEqual(byPosition(local.entries, positions(local.entries as Array<{ id: string }>)))
    expect(byPosition(context, positions(entries))).toEqual(byPosition(local.context, positions(local.entries as Array<{ id: string }>)))

    const known = KNOWN[name]!
    expect(context.messages).toHaveLength(known.messages)
    expect(context.models.default).toBe(known.model)
    const exported = (await client.exportSession(id)).split('\n').filter((l) => l !== '')
    expect(exported).toHaveLength(local.lines)
  })
})
