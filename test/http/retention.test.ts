/**
 * Retention (RETENTION_DAYS, or a tenant's `retention` in the token file), on memory and, in the
 * postgres project, on PostgreSQL: sessions unchanged for longer than the policy are deleted
 * (periodically, logged and counted in /metrics), their blobs go with the next collection, and a
 * labelled session stays when the policy keeps them.
 */
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { buildOnBackend, BACKENDS } from './hygiene-backends.js'
import { append, assistant, createSession, message } from './session-helpers.js'

const DAY_MS = 86_400_000

describe.each(BACKENDS)('retention' + ' on %s', (backend) => {
  let app: App
  afterEach(async () => {
    vi.useRealTimers()
    await app?.close()
  })
  const build = async (config: Partial<Config>): Promise<App> => (app = await buildOnBackend(backend, { blobGcGraceMs: 0, ...config }))

  /** A saved session with an image; its id and the id of its first entry. */
  const sessionWithImage = async (): Promise<{ id: string, first: string, data: string }> => {
    const { header } = await createSession(app)
    const id = (header as { id: string }).id
    const data = randomBytes(2000).toString('base64')
    const image = { type: 'image', data, mimeType: 'image/png' }
    const res = await append(app, id, { entries: [message({ role: 'user', content: [image], timestamp: Date.now() }), message(assistant())] })
    return { id, first: res.entries[0]?.id as string, data }
  }
  const exists = async (id: string): Promise<boolean> => (await app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).statusCode === 200
  const collect = async () => (await app.inject({ method: 'POST', url: '/v1/blobs/gc' })).json()

  it('deletes sessions older than the policy, keeps labelled ones when asked, and their blobs follow with the next collection', async () => {
    await build({ retentionDays: 30, retentionKeepLabelled: true })
    const plain = await sessionWithImage()
    const labelled = await sessionWithImage()
    await append(app, labelled.id, { type: 'label', targetId: labelled.first, label: 'keep me' })
    const cleared = await sessionWithImage()
    await append(app, cleared.id, { type: 'label', targetId: cleared.first, label: 'for a while' })
    await append(app, cleared.id, { type: 'label', targetId: cleared.first, label: '' })
    expect(await app.hygiene.retain('default')).toEqual({ examined: 0, deleted: 0, keptLabelled: 0 })

    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 31 * DAY_MS })
    expect(await app.hygiene.retain('default')).toEqual({ examined: 3, deleted: 2, keptLabelled: 1 })
    expect([await exists(plain.id), await exists(labelled.id), await exists(cleared.id)]).toEqual([false, true, false])
    expect(await collect()).toMatchObject({ scanned: 3, referenced: 1, deleted: 2 })
    const kept = await app.inject({ method: 'GET', url: `/v1/sessions/${labelled.id}/entries` })
    expect(kept.body).toContain(labelled.data)
  })

  it('deletes labelled sessions too unless the policy keeps them, and keeps everything without a policy', async () => {
    await build({ retentionDays: 0 })
    const labelled = await sessionWithImage()
    await append(app, labelled.id, { type: 'label', targetId: labelled.first, label: 'keep me' })
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3650 * DAY_MS })
    expect(await app.hygiene.retain('default')).toBeUndefined()
    expect(await exists(labelled.id)).toBe(true)
    await app.close()
    vi.useRealTimers()
    await build({ retentionDays: 1, retentionKeepLabelled: false })
    const again = await sessionWithImage()
    await append(app, again.id, { type: 'label', targetId: again.first, label: 'keep me' })
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 2 * DAY_MS })
    expect(await app.hygiene.retain('default')).toMatchObject({ deleted: 1, keptLabelled: 0 })
    expect(await exists(again.id)).toBe(false)
  })

  it('applies itself every RETENTION_INTERVAL_MS and counts what it deleted in /metrics', async () => {
    await build({ retentionDays: 7, retentionIntervalMs: 50 })
    const metric = async (): Promise<number> => {
      const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
      return Number(/^ss_retention_deleted_sessions_total (\d+)/m.exec(text)?.[1] ?? Number.NaN)
    }
    const before = await metric()
    const old = await sessionWithImage()
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 8 * DAY_MS })
    // The pass counts what it deleted when it ends, a moment after the session is gone.
    for (let i = 0; i < 100 && (await exists(old.id) || await metric() === before); i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await exists(old.id)).toBe(false)
    expect(await metric()).toBe(before + 1)
  })
})
