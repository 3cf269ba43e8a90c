/**
 * The client's entry, blob and dashboard-stream calls against a real listening server, with
 * their error answers (404, 412, 422, 400).
 */
import { createHash } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createClient, SessionStoreError, type GlobalStreamEvent, type SessionStoreClient } from '../../src/client/index.js'
import { assistant, listenTestServer, user, type TestServer } from './helpers.js'

let server: TestServer
let client: SessionStoreClient
let id: string

beforeEach(async () => {
  server = await listenTestServer()
  client = createClient({ baseUrl: server.baseUrl, retryDelayMs: 5 })
  id = (await client.createSession({ cwd: '/work/e' })).header.id
})
afterEach(async () => {
  await client.close()
  await server.close()
})

async function failure (promise: Promise<unknown>): Promise<SessionStoreError> {
  const err = await promise.then(() => undefined, (e: unknown) => e)
  expect(err).toBeInstanceOf(SessionStoreError)
  return err as SessionStoreError
}

/** A 1,024-byte PNG-looking image, big enough to be stored as a blob. */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(1016, 7)])
const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')

describe('entries', () => {
  it('appends one entry, then a batch under an explicit parent, with contiguous seqs', async () => {
    const one = await client.append(id, { type: 'message', message: user('a') })
    expect(one).toMatchObject({ firstSeq: 1, lastSeq: 1, persisted: false })
    const batch = await client.append(id, [{ type: 'message', message: assistant('b') }, { type: 'model_change', model: 'openai/gpt-4o' }])
    expect(batch).toMatchObject({ firstSeq: 2, lastSeq: 3, persisted: true })
    expect(batch.entries[0]!.parentId).toBe(one.leafId)
    const root = await client.append(id, { type: 'custom', customType: 'x' }, { parentId: null })
    expect(root.entries[0]!.parentId).toBeNull()
  })

  it('pages entries with after and limit, and reads them all', async () => {
    await client.append(id, Array.from({ length: 5 }, (_, i) => ({ type: 'custom' as const, customType: `c${i}` })))
    const page = await client.getEntries(id, { after: 1, limit: 2 })
    expect(page).toMatchObject({ after: 1, next: 3, total: 5 })
    expect(page.entries.map((e) => e.customType)).toEqual(['c1', 'c2'])
    expect((await client.allEntries(id)).map((e) => e.customType)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4'])
  })

  it('reads one entry; an unknown one is 404 SS_ENTRY_NOT_FOUND', async () => {
    const { entries: [entry] } = await client.append(id, { type: 'custom', customType: 'one', data: { n: 1 } })
    expect(await client.getEntry(id, entry!.id)).toEqual(entry)
    expect(await failure(client.getEntry(id, 'nope'))).toMatchObject({ status: 404, code: 'SS_ENTRY_NOT_FOUND' })
  })

  it('maps an unknown parent and an unknown label target to 422, a malformed entry to 400', async () => {
    const parent = await failure(client.append(id, { type: 'custom', customType: 'x' }, { parentId: 'ghost' }))
    expect(parent).toMatchObject({ status: 422, code: 'SS_UNKNOWN_PARENT' })
    const label = await failure(client.append(id, { type: 'label', targetId: 'ghost', label: 'l' }))
    expect(label).toMatchObject({ status: 422, code: 'SS_UNKNOWN_LABEL_TARGET' })
    const reserved = await failure(client.append(id, { type: 'message', message: { role: 'compactionSummary' } }))
    expect(reserved).toMatchObject({ status: 400, code: 'SS_VALIDATION' })
    expect((await client.getSession(id)).entryCount).toBe(0)
  })

  it('maps a stale If-Match on an append to 412, and reuse of a key with another body to 422', async () => {
    const { etag } = await client.getSession(id)
    await client.append(id, { type: 'custom', customType: 'a' }, { idempotencyKey: 'k1', ifMatch: etag })
    expect((await failure(client.append(id, { type: 'custom', customType: 'b' }, { ifMatch: etag }))).status).toBe(412)
    const reused = await failure(client.append(id, { type: 'custom', customType: 'c' }, { idempotencyKey: 'k1' }))
    expect(reused).toMatchObject({ status: 422, code: 'SS_IDEMPOTENCY_KEY_REUSED' })
  })

  it('moves the leaf, appends a branch summary, and reads tree, branch and context', async () => {
    const { entries: [u1, a1] } = await client.append(id, [{ type: 'message', message: user('u1') }, { type: 'message', message: assistant('a1') }])
    await client.append(id, { type: 'message', message: user('u2') })
    const moved = await client.setLeaf(id, a1!.id)
    expect(moved.leafId).toBe(a1!.id)
    expect((await failure(client.setLeaf(id, 'nope'))).code).toBe('SS_ENTRY_NOT_FOUND')
    const summary = await client.branchSummary(id, { fromId: u1!.id, summary: 'tried X' })
    expect(summary.entry).toMatchObject({ type: 'branch_summary', parentId: u1!.id, fromId: u1!.id })
    expect(summary.leafId).toBe(summary.entry.id)
    const tree = await client.getTree(id)
    expect(tree.leafId).toBe(summary.entry.id)
    expect(tree.nodes.find((n) => n.id === u1!.id)?.children).toHaveLength(2)
    expect((await client.getBranch(id)).map((e) => e.id)).toEqual([u1!.id, summary.entry.id])
    expect((await client.getBranch(id, { leafId: a1!.id })).map((e) => e.id)).toEqual([u1!.id, a1!.id])
    const context = await client.getContext(id)
    expect(context.messages.map((m) => m.role)).toEqual(['user', 'branchSummary'])
    expect((await client.getContext(id, { leafId: a1!.id })).models).toEqual({ default: 'anthropic/claude-test' })
  })

  it('keeps blob refs with blobs=ref and resolves them by default', async () => {
    const image = { type: 'image', mimeType: 'image/png', data: PNG.toString('base64') }
    const { entries: [entry] } = await client.append(id, { type: 'message', message: { role: 'user', content: [image] } }, { blobs: 'ref' })
    const ref = `blob:sha256:${sha(PNG)}`
    expect((entry!.message as { content: Array<{ data: string }> }).content[0]!.data).toBe(ref)
    const inline = await client.getEntry(id, entry!.id)
    expect((inline.message as { content: Array<{ data: string }> }).content[0]!.data).toBe(image.data)
  })
})

describe('blobs', () => {
  it('puts bytes under their hash (201, then 200), gets them back, and answers HEAD', async () => {
    const hash = sha(PNG)
    expect(await client.putBlob(hash, PNG)).toEqual({ hash, ref: `blob:sha256:${hash}`, size: PNG.length, created: true })
    expect((await client.putBlob(hash, PNG)).created).toBe(false)
    expect(await client.getBlob(hash)).toEqual({ bytes: PNG, contentType: 'image/png' })
    expect(await client.hasBlob(hash)).toBe(true)
    expect(await client.hasBlob('0'.repeat(64))).toBe(false)
  })

  it('posts bytes and learns their hash', async () => {
    const bytes = Buffer.from('plain bytes')
    expect(await client.postBlob(bytes)).toEqual({ hash: sha(bytes), ref: `blob:sha256:${sha(bytes)}`, size: bytes.length })
  })

  it('maps a digest mismatch to 422, a bad hash to 400 and a missing blob to 404', async () => {
    expect(await failure(client.putBlob('0'.repeat(64), PNG))).toMatchObject({ status: 422, code: 'SS_DIGEST_MISMATCH' })
    expect(await failure(client.getBlob('../etc/passwd'))).toMatchObject({ status: 400, code: 'SS_INVALID_BLOB_HASH' })
    expect(await failure(client.getBlob('1'.repeat(64)))).toMatchObject({ status: 404, code: 'SS_BLOB_NOT_FOUND' })
  })
})

describe('subscribeAll', () => {
  it('streams session lifecycle events with a SessionInfo', async () => {
    const controller = new AbortController()
    const seen: GlobalStreamEvent[] = []
    const reading = (async () => {
      for await (const event of client.subscribeAll({ signal: controller.signal })) {
        seen.push(event)
        if (event.type === 'session-deleted') controller.abort()
      }
    })()
    // The stream is live only once connected: create sessions until one is seen.
    let created = ''
    while (seen.length === 0) {
      created = (await client.createSession({ cwd: '/work/live' })).header.id
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await client.deleteSession(created)
    await reading
    expect(seen.at(-1)).toMatchObject({ type: 'session-deleted', info: { id: created, cwd: '/work/live' } })
    expect(seen.some((e) => e.type === 'session-created' && e.info.id === created)).toBe(true)
  })
})
