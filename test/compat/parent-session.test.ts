/**
 * A parent marker never names a server path in an answer: branched sessions store the parent's
 * id, and a file from an earlier build that holds the parent's absolute path inside DATA_DIR is
 * answered with that parent's id (the file is left as it is).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { http, startDiskServer, type DiskServer } from './support.js'

describe('compat: parent markers', () => {
  let server: DiskServer | undefined
  afterEach(async () => { await server?.cleanup() })

  it('answers an old absolute parent path inside DATA_DIR as the parent id, in the session and in the listing', async () => {
    server = await startDiskServer()
    const dir = join(server.dataDir, 'sessions', '--work-old--')
    mkdirSync(dir, { recursive: true })
    const parentPath = join(dir, '2026-03-14T15-04-07-123Z_parent-1.jsonl')
    const outside = '/elsewhere/2026-03-14T15-04-07-123Z_other.jsonl'
    const write = (id: string, parentSession: string): void => {
      const header = { type: 'session', version: 3, id, timestamp: '2026-03-14T15:04:08.000Z', cwd: '/work/old', parentSession }
      const entry = { type: 'message', id: 'm1', parentId: null, timestamp: '2026-03-14T15:04:09.000Z', message: { role: 'user', content: 'hi' } }
      writeFileSync(join(dir, `2026-03-14T15-04-08-000Z_${id}.jsonl`), `${JSON.stringify(header)}\n${JSON.stringify(entry)}\n`)
    }
    write('child-1', parentPath)
    write('child-2', outside)
    await server.stop()
    server = await startDiskServer(server.dataDir)
    const listed = await http(server.app, 'GET', '/v1/sessions?cwd=%2Fwork%2Fold')
    const byId = Object.fromEntries((listed.body.sessions as Array<{ id: string, parentSession?: string }>).map((s) => [s.id, s.parentSession]))
    expect(byId).toEqual({ 'child-1': 'parent-1', 'child-2': outside })
    const session = await http(server.app, 'GET', '/v1/sessions/child-1')
    expect(session.body.header.parentSession).toBe('parent-1')
    expect(session.raw).not.toContain(server.dataDir)
  })
})
