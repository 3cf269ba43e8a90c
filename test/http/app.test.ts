import { afterEach, describe, expect, it, vi } from 'vitest'
import type { App } from '../../src/app.js'
import { MemoryBlobStore } from '../../src/blobs/index.js'
import { buildTestApp } from '../helpers/app.js'

describe('buildApp', () => {
  let app: App
  afterEach(async () => { await app.close() })

  it('decorates the app with its config, blobs and registry', async () => {
    const blobs = new MemoryBlobStore()
    app = await buildTestApp({ blobs, config: { bodyLimit: 1234 } })
    expect(app.blobs).toBe(blobs)
    expect(app.config.bodyLimit).toBe(1234)
    expect(typeof app.registry.isReady).toBe('function')
    expect(app.initialConfig.bodyLimit).toBe(1234)
  })

  it('ends live streams (registry.shutdown) before the server closes', async () => {
    app = await buildTestApp()
    await app.ready()
    const shutdown = vi.spyOn(app.registry, 'shutdown')
    const close = vi.spyOn(app.registry, 'close')
    await app.close()
    expect(shutdown).toHaveBeenCalled()
    expect(shutdown.mock.invocationCallOrder[0]).toBeLessThan(close.mock.invocationCallOrder[0] ?? 0)
  })
})
