/**
 * Blob collection with several servers on one database: a collection on one server never takes
 * the blob of an append another server makes meanwhile, however old the blob's bytes were (the
 * append puts them again, which keeps them for the grace period, and the removal rechecks that
 * under the row lock the put takes).
 */
import { createHash, randomBytes } from 'node:crypto'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { pgAvailable } from '../../helpers/pg.js'
import { assistant, message } from '../../http/session-helpers.js'
import { call } from './server-calls.js'
import { useTwoServers } from './two-servers.js'

/** Far longer than an append takes here (a collection keeps what an append puts for this long). */
const GRACE_MS = 4000
const ROUNDS = 3
/** New images an append carries after the old bytes. */
const IMAGES = 200
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))
const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

/**
 * A saved session whose first message holds the image `bytes`, then `more` new images: the
 * append stores them one after the other before its lines, which leaves time between the put of
 * `bytes` and the commit of the line that references them.
 */
async function savedWith (base: string, bytes: Buffer, more = 0, id?: string): Promise<string> {
  id ??= await newSession(base)
  const image = (b: Buffer) => ({ type: 'image', data: b.toString('base64'), mimeType: 'image/png' })
  const content = [image(bytes), ...Array.from({ length: more }, () => image(randomBytes(1200)))]
  const entries = [message({ role: 'user', content, timestamp: Date.now() }), message(assistant())]
  const appended = await call(base, 'POST', `/v1/sessions/${id}/entries`, { entries })
  expect(appended.status, JSON.stringify(appended.body)).toBe(201)
  return id
}

async function newSession (base: string): Promise<string> {
  const created = await call(base, 'POST', '/v1/sessions', { cwd: '/work/gc' })
  expect(created.status).toBe(201)
  return created.body.header.id as string
}

describe.runIf(pgAvailable)('blob collection with two servers on one database', () => {
  const servers = useTwoServers()

  it('a collection running on A over and over never takes the blob of an append B makes meanwhile', async () => {
    const a = await servers.start({ BLOB_GC_GRACE_MS: String(GRACE_MS) })
    const b = servers.b.baseUrl
    const bytes = randomBytes(3000)
    const db = new pg.Client({ connectionString: servers.db.url })
    await db.connect()
    const blobCount = async (): Promise<number> => Number((await db.query('SELECT count(*) AS n FROM ss_blobs')).rows[0].n)
    try {
      let previous: string | undefined
      let during = 0
      for (let round = 0; round < ROUNDS; round++) {
        // The bytes are stored and unreferenced, and older than the grace period.
        if (previous !== undefined) expect((await call(b, 'DELETE', `/v1/sessions/${previous}`)).status).toBe(204)
        await sleep(GRACE_MS + 100)
        const state = { appending: true }
        const before = await blobCount()
        const append = savedWith(b, bytes, IMAGES, await newSession(b)).finally(() => { state.appending = false })
        // The append stores every image once while it prepares the batch, and again (the old bytes
        // first) as it writes the lines: once the new ones are all stored, its line is not
        // committed yet and the old bytes were, or are about to be, put again.
        while (state.appending && await blobCount() < before + IMAGES) await sleep(1)
        while (state.appending) {
          const res = await call(a.baseUrl, 'POST', '/v1/blobs/gc')
          expect([200, 409]).toContain(res.status)
          if (state.appending) during++
        }
        previous = await append
        expect((await call(a.baseUrl, 'GET', `/v1/blobs/sha256/${sha(bytes)}`)).status, `round ${round}`).toBe(200)
        const entries = await call(a.baseUrl, 'GET', `/v1/sessions/${previous}/entries`)
        expect(JSON.stringify(entries.body)).toContain(bytes.toString('base64'))
      }
      expect(during).toBeGreaterThan(0)
      // Once nothing references them and the grace period passed, a collection takes them.
      expect((await call(b, 'DELETE', `/v1/sessions/${previous ?? ''}`)).status).toBe(204)
      await sleep(GRACE_MS + 100)
      const last = (await call(a.baseUrl, 'POST', '/v1/blobs/gc')).body
      expect(last).toMatchObject({ referenced: 0, keptYoung: 0 })
      expect(last.deleted).toBe(last.scanned)
      expect((await call(b, 'GET', `/v1/blobs/sha256/${sha(bytes)}`)).status).toBe(404)
    } finally {
      await db.end()
    }
  }, 60_000)
})
