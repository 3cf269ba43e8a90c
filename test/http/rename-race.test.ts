/**
 * Regression test: a PATCH that takes a session's lock right after the append that saved it (the
 * append releases the lock before its write reaches the disk, for group commit) finds no file
 * yet. The rename must still answer 200 and end up in the file, never 5xx: its charge must not
 * read the file, and its rewrite queues behind the first write.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { FileBlobStore } from '../../src/blobs/index.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { buildTestApp } from '../helpers/app.js'
import { assistant, createSession, message, user } from './session-helpers.js'

const ROUNDS = 10
let app: App
let root: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ss-rename-race-'))
  const dataDir = join(root, 'data')
  // A rewrite budget, so every title change is charged (as with tokens).
  app = await buildTestApp({
    config: { dataDir, storage: 'disk', maxRewriteBytes: 1 << 30 },
    storage: new FileSessionStorage(),
    blobs: new FileBlobStore(join(dataDir, 'blobs')),
  })
})
afterAll(async () => {
  await app.close()
  await rm(root, { recursive: true, force: true })
})

/** The text of the one session file of `id` under DATA_DIR. */
async function fileOf (id: string): Promise<string> {
  const sessions = join(root, 'data', 'sessions')
  for (const dir of await readdir(sessions)) {
    const name = (await readdir(join(sessions, dir))).find((n) => n.endsWith(`_${id}.jsonl`))
    if (name !== undefined) return await readFile(join(sessions, dir, name), 'utf8')
  }
  throw new Error(`no file for ${id}`)
}

describe('PATCH right behind the append that saves the session', () => {
  it(`answers 200 and the title reaches the file (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const id = (await createSession(app, { cwd: `/race/${round}` })).header.id
      const first = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/entries`, payload: message(user('q')) })
      expect(first.json().persisted).toBe(false)
      const [saved, renamed] = await Promise.all([
        app.inject({ method: 'POST', url: `/v1/sessions/${id}/entries`, payload: message(assistant('a')) }),
        app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, payload: { title: `t${round}` } }),
      ])
      expect(saved.statusCode, saved.body).toBe(201)
      expect(renamed.statusCode, renamed.body).toBe(200)
      expect(JSON.parse((await fileOf(id)).split('\n')[0] as string)).toMatchObject({ type: 'session', title: `t${round}` })
    }
  })
})
