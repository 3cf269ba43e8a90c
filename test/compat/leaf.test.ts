/**
 * A leaf moved with `PUT /leaf` is either recorded on disk the way the agents record one (an empty
 * branch summary under the target: `durable: true`) or answered as held in memory only
 * (`durable: false`), and then it is indeed gone after a restart. Never a state that silently
 * disappears.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { expectReaderAgrees } from './compare.js'
import { http, READER_NAMES, startDiskServer, type DiskServer, type Json } from './support.js'

const turn = (text: string): Json[] => [
  { type: 'message', message: { role: 'user', content: text, timestamp: 1 } },
  { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: `re: ${text}` }], provider: 'openai', model: 'gpt-4o', stopReason: 'stop', timestamp: 2 } },
]

describe('compat: moving the leaf', () => {
  let server: DiskServer | undefined
  afterEach(async () => { await server?.cleanup() })

  async function session (s: DiskServer): Promise<{ id: string, ids: string[] }> {
    const created = await http(s.app, 'POST', '/v1/sessions', { cwd: '/work/leaf' })
    const appended = await http(s.app, 'POST', `/v1/sessions/${created.body.header.id}/entries`, { entries: [...turn('one'), ...turn('two')] })
    expect(appended.status, appended.raw).toBe(201)
    return { id: created.body.header.id, ids: (appended.body.entries as Json[]).map((e) => e.id as string) }
  }

  it('says durable: false for a move held in memory, and after a restart the session is at its last entry', async () => {
    server = await startDiskServer()
    const { id, ids } = await session(server)
    const moved = await http(server.app, 'PUT', `/v1/sessions/${id}/leaf`, { leafId: ids[1] })
    expect(moved.status, moved.raw).toBe(200)
    expect(moved.body).toMatchObject({ leafId: ids[1], durable: false })
    await server.stop()
    server = await startDiskServer(server.dataDir)
    expect((await http(server.app, 'GET', `/v1/sessions/${id}`)).body.leafId).toBe(ids[3])
  })

  it('with durable: true records the move as the agents do; it survives a restart and the agents open the session there', async () => {
    server = await startDiskServer()
    const { id, ids } = await session(server)
    const before = (await http(server.app, 'GET', `/v1/sessions/${id}/context?leafId=${ids[1]}`)).body
    const moved = await http(server.app, 'PUT', `/v1/sessions/${id}/leaf`, { leafId: ids[1], durable: true })
    expect(moved.status, moved.raw).toBe(200)
    expect(moved.body.durable).toBe(true)
    const marker = (await http(server.app, 'GET', `/v1/sessions/${id}/entries/${moved.body.leafId as string}`)).body
    expect(marker).toMatchObject({ type: 'branch_summary', parentId: ids[1], fromId: ids[1], summary: '' })
    await server.stop()
    server = await startDiskServer(server.dataDir)
    expect((await http(server.app, 'GET', `/v1/sessions/${id}`)).body.leafId).toBe(marker.id)
    expect((await http(server.app, 'GET', `/v1/sessions/${id}/context`)).body).toEqual(before)
    for (const reader of READER_NAMES) {
      const { view } = await expectReaderAgrees(server.app, server.dataDir, id, reader)
      expect(view.leafId).toBe(marker.id)
    }
    // Reset to before the first entry, durably: a new root marker, an empty context.
    const reset = await http(server.app, 'PUT', `/v1/sessions/${id}/leaf`, { leafId: null, durable: true })
    expect(reset.body.durable).toBe(true)
    expect((await http(server.app, 'GET', `/v1/sessions/${id}/context`)).body.messages).toEqual([])
    expect((await http(server.app, 'GET', `/v1/sessions/${id}/entries/${reset.body.leafId as string}`)).body).toMatchObject({ parentId: null, fromId: 'root', summary: '' })
  }, 120_000)

  it('says durable: false while the session is still held in memory (no assistant message yet)', async () => {
    server = await startDiskServer()
    const created = await http(server.app, 'POST', '/v1/sessions', { cwd: '/work/leaf' })
    const id = created.body.header.id as string
    const first = await http(server.app, 'POST', `/v1/sessions/${id}/entries`, { type: 'message', message: { role: 'user', content: 'hi' } })
    const moved = await http(server.app, 'PUT', `/v1/sessions/${id}/leaf`, { leafId: first.body.entries[0].id, durable: true })
    expect(moved.status, moved.raw).toBe(200)
    expect(moved.body.durable).toBe(false)
  })
})
