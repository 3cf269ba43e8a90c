import { afterEach, describe, expect, it, vi } from 'vitest'
import type { App } from '../../src/app.js'
import { MemorySessionStorage } from '../../src/storage/index.js'
import { buildTestApp } from '../helpers/app.js'

const erofs = (): Error => Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' })

describe('health routes', () => {
  let app: App
  afterEach(async () => { await app.close() })

  it('GET /healthz answers 200 {status: ok}', async () => {
    app = await buildTestApp()
    const res = await app.inject({ method: 'GET', url: '/healthz' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 'ok' })
  })

  it('GET /readyz answers 200 after writing and removing a probe file under DATA_DIR', async () => {
    const storage = new MemorySessionStorage()
    const writeText = vi.spyOn(storage, 'writeText')
    app = await buildTestApp({ storage, config: { dataDir: '/ready-data' } })
    const res = await app.inject({ method: 'GET', url: '/readyz' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 'ok' })
    const probe = writeText.mock.calls[0]?.[0]
    expect(probe).toMatch(/^\/ready-data\/\.readyz-/)
    expect(storage.existsSync(probe ?? '')).toBe(false)
  })

  it('GET /readyz answers 503 SS_NOT_READY when storage cannot write', async () => {
    const storage = new MemorySessionStorage({ failWrites: () => erofs() })
    app = await buildTestApp({ storage })
    const res = await app.inject({ method: 'GET', url: '/readyz' })
    expect(res.statusCode).toBe(503)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toEqual({
      type: 'about:blank', title: 'Service Unavailable', status: 503, code: 'SS_NOT_READY', detail: 'The service is not ready',
    })
    expect(res.body).not.toContain('EROFS')
  })

  it('GET /readyz answers 503 when the registry is not ready', async () => {
    app = await buildTestApp()
    vi.spyOn(app.registry, 'isReady').mockReturnValue(false)
    const res = await app.inject({ method: 'GET', url: '/readyz' })
    expect(res.statusCode).toBe(503)
    expect(res.json()).toMatchObject({ code: 'SS_NOT_READY' })
  })
})
