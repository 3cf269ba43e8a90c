/**
 * Regression test: move, fork, rename, append and delete of one session, all at once, leave the
 * index and the disk agreeing: every answer is one the contract allows (never a 5xx), a deleted
 * session has no file left, every listed session opens, and every session file is listed.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildDiskTestApp } from '../helpers/app.js'

const ROUNDS = 4
let app: App
let root: string
let dataDir: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ss-concurrent-'))
  dataDir = join(root, 'data')
  app = await buildDiskTestApp(dataDir)
})
afterAll(async () => {
  await app.close()
  await rm(root, { recursive: true, force: true })
})

const ENTRIES = {
  entries: [
    { type: 'message', message: { role: 'user', content: 'u', timestamp: 1 } },
    { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'a' }], provider: 'p', model: 'm', timestamp: 2 } },
  ],
}

/** Every session file below DATA_DIR/sessions, as `<id>` (the part of the name after `_`). */
async function idsOnDisk (): Promise<string[]> {
  const out: string[] = []
  const sessions = join(dataDir, 'sessions')
  for (const dir of await readdir(sessions).catch(() => [])) {
    for (const name of await readdir(join(sessions, dir))) {
      if (name.endsWith('.jsonl')) out.push(name.slice(name.indexOf('_') + 1, -'.jsonl'.length))
    }
  }
  return out.sort()
}

describe('concurrent move, fork, rename, append and delete of one session', () => {
  it(`leave index and disk consistent (${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const created = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: `/c/${round}` } })
      const id = created.json().header.id as string
      expect((await app.inject({ method: 'POST', url: `/v1/sessions/${id}/entries`, payload: ENTRIES })).json().persisted).toBe(true)
      const ops = [
        ...[1, 2, 3].map((i) => ({ method: 'POST' as const, url: `/v1/sessions/${id}/move`, payload: { cwd: `/m/${round}/${i}` }, ok: [200, 404, 409] })),
        ...[1, 2, 3].map(() => ({ method: 'POST' as const, url: `/v1/sessions/${id}/fork`, ok: [201, 404] })),
        ...[1, 2].map((i) => ({ method: 'PATCH' as const, url: `/v1/sessions/${id}`, payload: { title: `t${i}` }, ok: [200, 404] })),
        ...[1, 2].map(() => ({ method: 'POST' as const, url: `/v1/sessions/${id}/entries`, payload: { type: 'custom', customType: 'x' }, ok: [201, 404] })),
        { method: 'DELETE' as const, url: `/v1/sessions/${id}`, ok: [204, 404] },
      ]
      const answers = await Promise.all(ops.map(async ({ ok, ...request }) => ({ ok, res: await app.inject(request) })))
      for (const { ok, res } of answers) expect(ok, `${res.statusCode} ${res.body}`).toContain(res.statusCode)
      const deleted = answers.at(-1)?.res.statusCode === 204
      expect((await app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).statusCode).toBe(deleted ? 404 : 200)

      const listed = (await app.inject({ method: 'GET', url: '/v1/sessions?includeEmpty=true&limit=1000' })).json().sessions as Array<{ id: string }>
      const listedIds = listed.map((s) => s.id).sort()
      expect(listedIds).toEqual(await idsOnDisk())
      if (deleted) expect(listedIds).not.toContain(id)
      for (const sid of listedIds) expect((await app.inject({ method: 'GET', url: `/v1/sessions/${sid}/entries` })).statusCode).toBe(200)
    }
  })
})
