/**
 * oh-my-pi 18.2.3's own SessionManager, under Bun, over `session-store/omp`'s
 * HttpSessionStorageBackend: its sessions live in the server (no file in its own directory), and
 * a second process with an empty session directory opens one and continues it; the first then
 * sees what the second appended.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inject } from 'vitest'
import { replayFilter } from './compare.js'
import { agentHome, allEntries, http, runReader, sampleImage, serviceTree, startDiskServer, wire, type AgentHome, type DiskServer, type Json } from './support.js'

interface AgentView { id: string, file: string, ids: Record<string, string>, entries: Json[], leafId: string | null, tree: { roots: string[], nodes: Array<{ id: string, children: string[] }> }, context: Json }

const CWD = '/work/omp-shared'

describe('compat: oh-my-pi sessions kept in the server through HttpSessionStorageBackend', () => {
  let server: DiskServer
  let url: string
  const homes: AgentHome[] = []
  const backend = (): string => join(inject('buildDir'), 'src', 'omp', 'index.js')
  const drive = async (home: AgentHome, request: Json): Promise<AgentView> =>
    await runReader<AgentView>('omp', { server: url, backend: backend(), cwd: CWD, ...request }, home, 'omp-backend.mjs')
  let first: AgentView
  let firstHome: AgentHome

  beforeAll(async () => {
    server = await startDiskServer()
    url = await server.app.listen({ port: 0, host: '127.0.0.1' })
    firstHome = agentHome()
    homes.push(firstHome)
    first = await drive(firstHome, { op: 'write', image: sampleImage(4) })
  }, 120_000)
  afterAll(async () => {
    await server?.cleanup()
    for (const home of homes) home.cleanup()
  })

  /** The service serves what the agent sees: entries, leaf, tree and (as the agent replays it) context. */
  async function expectServerAgrees (view: AgentView): Promise<void> {
    expect(wire(view.entries)).toEqual(await allEntries(server.app, view.id))
    const tree = await serviceTree(server.app, view.id)
    expect(view.tree.roots).toEqual(tree.roots)
    expect(Object.fromEntries(view.tree.nodes.map((n) => [n.id, n.children]))).toEqual(tree.children)
    const session = await http(server.app, 'GET', `/v1/sessions/${view.id}`)
    expect(session.body.leafId).toBe(view.leafId)
    const context = await http(server.app, 'GET', `/v1/sessions/${view.id}/context`)
    expect(wire(view.context.messages)).toEqual(replayFilter(context.body.messages as Json[]))
  }

  it('SessionManager.create(cwd, dir, storage) stores the session in the server, images in its blob store', async () => {
    expect(first.file).toContain(join(firstHome.agentDir, 'sessions', '--work-omp-shared--'))
    expect(existsSync(first.file)).toBe(false)
    const session = await http(server.app, 'GET', `/v1/sessions/${first.id}`)
    expect(session.status).toBe(200)
    expect(session.body.header.title).toBe('Shared through the server')
    await expectServerAgrees(first)
    const stored = await http(server.app, 'GET', `/v1/sessions/${first.id}/entries/${first.ids.user}?blobs=ref`)
    const ref = ((stored.body.message as Json).content as Json[])[1]!.data as string
    expect(ref).toMatch(/^blob:sha256:[0-9a-f]{64}$/)
    expect((await server.app.inject({ method: 'GET', url: `/v1/blobs/sha256/${ref.slice(12)}` })).statusCode).toBe(200)
  }, 120_000)

  it('a second process with an empty session directory continues the session, and the first sees what it added', async () => {
    const second = agentHome()
    homes.push(second)
    expect(readdirSync(second.agentDir)).toEqual([])
    const continued = await drive(second, { op: 'continue', text: 'From the second machine' })
    expect(continued.id).toBe(first.id)
    expect(continued.entries.map((e) => e.id)).toEqual([...first.entries.map((e) => e.id), continued.ids.user, continued.ids.reply])
    const image = ((continued.entries.find((e) => e.id === first.ids.user)!.message as Json).content as Json[])[1]!
    expect(image.data).toBe(sampleImage(4))
    await expectServerAgrees(continued)

    const again = await drive(firstHome, { op: 'read', file: first.file })
    expect(again.entries.map((e) => e.id)).toEqual(continued.entries.map((e) => e.id))
    expect(again.leafId).toBe(continued.ids.reply)
  }, 120_000)
})
