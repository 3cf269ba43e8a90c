/**
 * Blob collection over HTTP (`POST /v1/blobs/gc`), on memory and, in the postgres project, on
 * PostgreSQL: what a collection must never take (a blob uploaded for an append still to come, a
 * blob only an unsaved session references, a blob another session still references) and what it
 * must take (a blob nothing references, once older than the grace period).
 */
import { createHash, randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { JsonlStore } from '../../src/storage/jsonl/jsonl-store.js'
import { buildTestApp } from '../helpers/app.js'
import { buildOnBackend, BACKENDS } from './hygiene-backends.js'
import { append, assistant, createSession, message } from './session-helpers.js'

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')
const image = (data: string) => ({ type: 'image', data, mimeType: 'image/png' })
const withImage = (data: string) => message({ role: 'user', content: [{ type: 'text', text: 'look' }, image(data)], timestamp: Date.now() })

describe.each(BACKENDS)('POST /v1/blobs/gc' + ' on %s', (backend) => {
  let app: App
  afterEach(async () => { await app?.close() })
  const build = async (config: Partial<Config> = {}): Promise<App> => (app = await buildOnBackend(backend, config))

  const upload = async (bytes: Buffer): Promise<string> => {
    const res = await app.inject({ method: 'PUT', url: `/v1/blobs/sha256/${sha(bytes)}`, payload: bytes, headers: { 'content-type': 'application/octet-stream' } })
    expect(res.statusCode, res.body).toBe(201)
    return sha(bytes)
  }
  const collect = async (query = '') => {
    const res = await app.inject({ method: 'POST', url: `/v1/blobs/gc${query}` })
    expect(res.statusCode, res.body).toBe(200)
    return res.json<{ scanned: number, referenced: number, keptYoung: number, deleted: number, bytesFreed: number }>()
  }
  const stored = async (hash: string): Promise<boolean> => {
    const res = await app.inject({ method: 'HEAD', url: `/v1/blobs/sha256/${hash}` })
    return res.statusCode === 200
  }
  /** A saved session (user + assistant) whose first message holds the image `bytes`. */
  const savedWith = async (bytes: Buffer): Promise<string> => {
    const { header } = await createSession(app)
    const id = (header as { id: string }).id
    await append(app, id, { entries: [withImage(bytes.toString('base64')), message(assistant())] })
    return id
  }

  it('takes an unreferenced blob older than the grace period, and a dry run takes nothing', async () => {
    await build({ blobGcGraceMs: 0 })
    const bytes = randomBytes(3000)
    const hash = await upload(bytes)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await collect('?dryRun=true')).toEqual({ scanned: 1, referenced: 0, keptYoung: 0, deleted: 1, bytesFreed: 3000 })
    expect(await stored(hash)).toBe(true)
    expect(await collect()).toEqual({ scanned: 1, referenced: 0, keptYoung: 0, deleted: 1, bytesFreed: 3000 })
    expect(await stored(hash)).toBe(false)
  })

  it('keeps a blob uploaded within the grace period, so the append that references it after the collection finds it', async () => {
    await build()
    const bytes = randomBytes(3000)
    const hash = await upload(bytes)
    expect(await collect()).toEqual({ scanned: 1, referenced: 0, keptYoung: 1, deleted: 0, bytesFreed: 0 })
    const { header } = await createSession(app)
    const id = (header as { id: string }).id
    await append(app, id, { entries: [withImage(`blob:sha256:${hash}`), message(assistant())] })
    const res = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries` })
    expect(JSON.stringify(res.json())).toContain(bytes.toString('base64'))
    expect(await stored(hash)).toBe(true)
  })

  it('keeps a blob that only a session not saved yet references', async () => {
    await build({ blobGcGraceMs: 0 })
    const bytes = randomBytes(3000)
    const { header } = await createSession(app)
    const id = (header as { id: string }).id
    const appended = await append(app, id, { entries: [withImage(bytes.toString('base64'))] })
    expect(appended.persisted).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await collect()).toMatchObject({ scanned: 1, referenced: 1, deleted: 0 })
    expect(await stored(sha(bytes))).toBe(true)
  })

  it('keeps a blob two sessions reference while one of them is left, and takes it once both are gone', async () => {
    await build({ blobGcGraceMs: 0 })
    const bytes = randomBytes(3000)
    const a = await savedWith(bytes)
    const b = await savedWith(bytes)
    expect((await app.inject({ method: 'DELETE', url: `/v1/sessions/${a}` })).statusCode).toBe(204)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await collect()).toMatchObject({ scanned: 1, referenced: 1, deleted: 0 })
    expect(await stored(sha(bytes))).toBe(true)
    expect((await app.inject({ method: 'DELETE', url: `/v1/sessions/${b}` })).statusCode).toBe(204)
    expect(await collect()).toMatchObject({ scanned: 1, referenced: 0, deleted: 1, bytesFreed: 3000 })
    expect(await stored(sha(bytes))).toBe(false)
  })

  it('keeps the blob of an append that lands while a collection over other sessions runs', async () => {
    await build({ blobGcGraceMs: 60_000 })
    const olds = await Promise.all(Array.from({ length: 20 }, async () => await savedWith(randomBytes(2000))))
    expect(olds).toHaveLength(20)
    const bytes = randomBytes(3000)
    const [report] = await Promise.all([collect(), savedWith(bytes)])
    expect(report.deleted).toBe(0)
    expect(await stored(sha(bytes))).toBe(true)
  })

  it('runs one collection of a tenant at a time: another asked for meanwhile is refused', async () => {
    await build()
    // The first collection waits in its sweep until the second has been refused.
    const blobs = app.tenants.get('default').blobs
    const scan = blobs.scan.bind(blobs)
    let sweeping!: () => void
    let release!: () => void
    const swept = new Promise<void>((resolve) => { sweeping = resolve })
    const gate = new Promise<void>((resolve) => { release = resolve })
    blobs.scan = async function * () { sweeping(); await gate; yield * scan() }
    const first = app.hygiene.collect('default')
    await swept
    await expect(app.hygiene.collect('default')).rejects.toMatchObject({ code: 'SS_COLLECTION_RUNNING', statusCode: 409 })
    release()
    expect(await first).toMatchObject({ scanned: 0 })
    expect(await collect()).toMatchObject({ scanned: 0 })
  })
})

describe('POST /v1/blobs/gc while a collection runs', () => {
  it('answers 409 SS_COLLECTION_RUNNING', async () => {
    const store = JsonlStore.inMemory('/gc-busy')
    const app = await buildTestApp({ store })
    try {
      let release = (): void => {}
      const held = store.runAlone('blob-gc:default', async () => { await new Promise<void>((resolve) => { release = resolve }) })
      const res = await app.inject({ method: 'POST', url: '/v1/blobs/gc' })
      expect(res.statusCode).toBe(409)
      expect(res.json()).toMatchObject({ code: 'SS_COLLECTION_RUNNING' })
      release()
      await held
      expect((await app.inject({ method: 'POST', url: '/v1/blobs/gc' })).statusCode).toBe(200)
    } finally {
      await app.close()
      await store.close()
    }
  })

  it('answers a collection that takes longer than CONNECTION_TIMEOUT_MS over a real socket', async () => {
    const inner = JsonlStore.inMemory('/gc-slow')
    const store = new Proxy(inner, {
      get (target, prop) {
        if (prop !== 'refLines') return (Reflect.get(target, prop) as (...a: unknown[]) => unknown).bind(target)
        return async function * (tenant: string) {
          await new Promise((resolve) => setTimeout(resolve, 700))
          yield * target.refLines(tenant)
        }
      },
    })
    const app = await buildTestApp({ store, config: { connectionTimeoutMs: 200 } })
    try {
      const base = await app.listen({ port: 0, host: '127.0.0.1' })
      const res = await fetch(`${base}/v1/blobs/gc`, { method: 'POST' })
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ scanned: 0 })
    } finally {
      await app.close()
      await inner.close()
    }
  })
})
