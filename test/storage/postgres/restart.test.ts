/**
 * STORAGE=postgres across a restart (and servers side by side on one database): what the HTTP API wrote is served again by a server on the
 * same database whose DATA_DIR is new and empty, and the stored sessions are the files the disk
 * storage writes for the same operations.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../../src/app.js'
import { openStore, type OpenedStore } from '../../../src/storage/open-store.js'
import { acquireInstanceLock } from '../../../src/storage/postgres/instance-lock.js'
import { buildDiskTestApp, buildTestApp } from '../../helpers/app.js'
import { createTestDatabase, pgAvailable, type TestDatabase } from '../../helpers/pg.js'
import { append, assistant, message, user } from '../../http/session-helpers.js'

const SESSIONS = ['restart-a', 'restart-b']

/** The same requests for every storage: appends, a branch, a title (a rewrite), a move, appends after it. */
async function writeThrough (app: App): Promise<void> {
  for (const id of SESSIONS) {
    expect((await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/work/p', id } })).statusCode).toBe(201)
    const first = await append(app, id, { entries: [message(user('hello')), message(assistant('hi there'))] })
    await append(app, id, { parentId: first.entries[0]?.id, ...message(user('another way')) })
    await append(app, id, { entries: [message(assistant('é€😀')), message(user('more'))] })
  }
  expect((await app.inject({ method: 'PATCH', url: `/v1/sessions/${SESSIONS[0]}`, payload: { title: 'Renamed' } })).statusCode).toBe(200)
  expect((await app.inject({ method: 'POST', url: `/v1/sessions/${SESSIONS[1]}/move`, payload: { cwd: '/work/q' } })).statusCode).toBe(200)
  await append(app, SESSIONS[1] as string, { entries: [message(user('after the move')), message(assistant('still here'))] })
}

/** Everything a client can read of the sessions. */
async function readBack (app: App): Promise<Record<string, unknown>> {
  const get = async (url: string): Promise<unknown> => {
    const res = await app.inject({ method: 'GET', url })
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200)
    return url.endsWith('/export') ? res.body : res.json()
  }
  const out: Record<string, unknown> = { list: await get('/v1/sessions') }
  for (const id of SESSIONS) {
    for (const part of ['', '/entries?limit=1000', '/tree', '/context', '/export']) out[`${id}${part}`] = await get(`/v1/sessions/${id}${part}`)
  }
  return out
}

/** `text` with the ids and times the server assigns replaced by their order of appearance. */
function normalized (text: string): string {
  const seen = new Map<string, string>()
  const stable = (value: string): string => seen.get(value) ?? seen.set(value, `#${seen.size}`).get(value) as string
  return text
    .replace(/"(id|parentId|targetId|leafId)":"([0-9a-f]{8})"/g, (_, key: string, id: string) => `"${key}":"${stable(id)}"`)
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, 'T')
    .replace(/"timestamp":\d+/g, '"timestamp":0')
}

/** `value` without the `modified` and `etag` fields. */
function withoutTimes (value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v: unknown) => key === 'modified' || key === 'etag' ? undefined : v))
}

describe.runIf(pgAvailable)('STORAGE=postgres across a restart', () => {
  let db: TestDatabase
  const dirs: string[] = []
  const freshDir = (): string => { const d = mkdtempSync(join(tmpdir(), 'ss-pg-restart-')); dirs.push(d); return d }
  beforeAll(async () => { db = await createTestDatabase() })
  afterAll(async () => {
    await db?.drop()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  async function withPgApp<T> (fn: (app: App) => Promise<T>): Promise<T> {
    const dataDir = freshDir()
    const opened: OpenedStore = await openStore({ storage: 'postgres', dataDir, databaseUrl: db.url })
    const app = await buildTestApp({ config: { dataDir }, store: opened.store })
    try {
      return await fn(app)
    } finally {
      await app.close()
      await opened.close()
    }
  }

  it('serves every session, entry, tree and export again from an empty DATA_DIR, as the disk storage stores them', async () => {
    const before = await withPgApp(async (app) => { await writeThrough(app); return await readBack(app) })
    const after = await withPgApp(async (app) => await readBack(app))
    // While a session is loaded the registry reports the time of its last change as it saw it,
    // after a restart the stored mtime, on disk alike: those two (and the ETag made from it) may differ.
    expect(withoutTimes(after)).toEqual(withoutTimes(before))
    expect((after[`${SESSIONS[1]}/export`] as string).split('\n')).toHaveLength(9)

    const disk = await buildDiskTestApp(freshDir())
    try {
      await writeThrough(disk)
      const onDisk = await readBack(disk)
      for (const id of SESSIONS) expect(normalized(after[`${id}/export`] as string)).toBe(normalized(onDisk[`${id}/export`] as string))
    } finally {
      await disk.close()
    }
  })

  it('opens a second server beside the first, and keeps a store migration out while either runs', async () => {
    const first = await openStore({ storage: 'postgres', dataDir: freshDir(), databaseUrl: db.url })
    try {
      const second = await openStore({ storage: 'postgres', dataDir: freshDir(), databaseUrl: db.url })
      try {
        await expect(acquireInstanceLock(db.url, 'migration'))
          .rejects.toMatchObject({ code: 'SS_INVALID_CONFIG', message: expect.stringContaining('DATABASE_URL: another session-store server') })
      } finally {
        await second.close()
      }
      await expect(acquireInstanceLock(db.url, 'migration')).rejects.toMatchObject({ code: 'SS_INVALID_CONFIG' })
    } finally {
      await first.close()
    }
    const migration = await acquireInstanceLock(db.url, 'migration')
    try {
      await expect(openStore({ storage: 'postgres', dataDir: freshDir(), databaseUrl: db.url }))
        .rejects.toMatchObject({ code: 'SS_INVALID_CONFIG', message: expect.stringContaining('a store migration is running') })
    } finally {
      await migration.release()
    }
  })
})
