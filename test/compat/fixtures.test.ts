/**
 * The two agent fixtures, imported over HTTP, read back by both published readers from the
 * service's data directory: the same entries, ids, parents, leaf, tree and context.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectReaderAgrees } from './compare.js'
import { http, READER_NAMES, readFixture, startDiskServer, type DiskServer } from './support.js'

const FIXTURES = [
  { name: 'pi-v1-large-session.jsonl', messages: 914 },
  { name: 'pi-v1-before-compaction.jsonl', messages: 446 },
]

describe('compat: fixtures imported over HTTP open in the agents', () => {
  let server: DiskServer
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    let s = await startDiskServer()
    for (const fixture of FIXTURES) {
      const res = await http(s.app, 'POST', '/v1/sessions/import', readFixture(fixture.name), { 'content-type': 'application/x-ndjson' })
      expect(res.status, res.raw).toBe(201)
      ids[fixture.name] = res.body.header.id
    }
    // What the readers see is what is on disk: compare with a server that loaded it again.
    await s.stop()
    s = await startDiskServer(s.dataDir)
    server = { ...s, cleanup: async () => { await s.cleanup() } }
  }, 120_000)
  afterAll(async () => { await server?.cleanup() })

  for (const fixture of FIXTURES) {
    for (const reader of READER_NAMES) {
      it(`${fixture.name} in ${reader}`, async () => {
        const id = ids[fixture.name]!
        const { entries } = await expectReaderAgrees(server.app, server.dataDir, id, reader)
        const context = await http(server.app, 'GET', `/v1/sessions/${id}/context`)
        expect(context.body.messages).toHaveLength(fixture.messages)
        expect(entries.length).toBeGreaterThan(0)
      }, 120_000)
    }
  }
})
