/**
 * Sessions written by both published agents' own SessionManagers (every entry kind they can
 * append, images in their blob store, a branch with its summary) import into the service
 * losslessly: the same entries, tree and context, and the export is the agent's file byte for byte.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectReaderAgrees } from './compare.js'
import { agentHome, http, READER_NAMES, runReader, sampleImage, startDiskServer, type AgentHome, type DiskServer, type Json, type ReaderName } from './support.js'

interface Written { ids: Record<string, string>, file: string }

describe('compat: sessions the agents write import into the service', () => {
  let server: DiskServer
  const homes: AgentHome[] = []
  const written = new Map<ReaderName, Written & { id: string }>()

  beforeAll(async () => {
    let s = await startDiskServer()
    for (const reader of READER_NAMES) {
      const home = agentHome()
      homes.push(home)
      const out = await runReader<Written>(reader, { op: 'write', cwd: '/work/demo', dir: join(home.agentDir, 'sessions', '--work-demo--'), image: sampleImage(2) }, home)
      // The agent's blobs first (a client migrating its sessions sends them the same way).
      const blobDir = join(home.agentDir, 'blobs')
      for (const name of safeList(blobDir).filter((n) => /^[0-9a-f]{64}$/.test(n))) {
        const put = await s.app.inject({ method: 'PUT', url: `/v1/blobs/sha256/${name}`, payload: readFileSync(join(blobDir, name)), headers: { 'content-type': 'application/octet-stream' } })
        expect(put.statusCode, put.body).toBeLessThan(300)
      }
      const imported = await http(s.app, 'POST', '/v1/sessions/import', readFileSync(out.file, 'utf8'), { 'content-type': 'application/x-ndjson' })
      expect(imported.status, imported.raw).toBe(201)
      written.set(reader, { ...out, id: imported.body.header.id })
    }
    await s.stop()
    server = s = await startDiskServer(s.dataDir)
  }, 180_000)
  afterAll(async () => {
    await server?.cleanup()
    for (const home of homes) home.cleanup()
  })

  for (const reader of READER_NAMES) {
    it(`exports the session ${reader} wrote byte for byte`, async () => {
      const w = written.get(reader)!
      const res = await server.app.inject({ method: 'GET', url: `/v1/sessions/${w.id}/export` })
      expect(res.statusCode).toBe(200)
      expect(res.rawPayload.equals(readFileSync(w.file))).toBe(true)
    })

    it(`serves the entries, tree and context ${reader} sees in the session it wrote`, async () => {
      const w = written.get(reader)!
      const leaves = [w.ids.afterCompactionReply!, w.ids.reply!, w.ids.branchReply!]
      const { view, entries } = await expectReaderAgrees(server.app, server.dataDir, w.id, reader, leaves)
      expect(entries.map((e) => e.id)).toEqual(view.entries.map((e) => e.id))
      const kinds = new Set(entries.map((e) => e.type))
      for (const kind of ['message', 'thinking_level_change', 'model_change', 'compaction', 'custom', 'custom_message', 'label', 'branch_summary']) expect(kinds).toContain(kind)
      if (reader === 'omp') for (const kind of ['service_tier_change', 'ttsr_injection', 'mode_change', 'session_init']) expect(kinds).toContain(kind)
      const user = entries.find((e) => e.id === w.ids.user)!
      const image = ((user.message as Json).content as Json[])[1]!
      expect(image.data).toBe(sampleImage(2))
    }, 120_000)
  }
})

function safeList (dir: string): string[] {
  try { return readdirSync(dir) } catch { return [] }
}
