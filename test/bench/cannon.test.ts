import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { checkClean, runCannon, type CannonSummary } from '../../bench/lib/cannon.js'

describe('bench load generator', () => {
  const server = createServer()
  afterEach(() => { server.close() })

  it('keeps every connection on its own path for the whole load, not only its first request', async () => {
    const seen = new Map<string, number>()
    server.on('request', (req, res) => {
      req.resume()
      req.on('end', () => {
        seen.set(req.url ?? '', (seen.get(req.url ?? '') ?? 0) + 1)
        res.end('ok')
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    const paths = ['/one', '/two', '/three']
    const summary = await runCannon({
      url: `http://127.0.0.1:${port}/one`, connections: 3, durationS: 1, method: 'POST', headers: {}, body: 'x', paths,
    })
    expect(summary.ok).toBeGreaterThan(30)
    for (const path of paths) expect(seen.get(path) ?? 0, path).toBeGreaterThan(10)
    expect([...seen.keys()].sort()).toEqual([...paths].sort())
  }, 60_000)
})

describe('a clean load', () => {
  const clean: CannonSummary = {
    rps: 100, total: 500, ok: 500, p50: 1, p99: 2, non2xx: 0, errors: 0, timeouts: 0, mismatches: 0, durationS: 5, statuses: { 201: 500 }, clientCores: 0.5,
  }

  it('passes only when every request was answered 2xx with the body asked for', () => {
    expect(() => { checkClean('load', clean) }).not.toThrow()
    for (const fault of [{ non2xx: 1 }, { errors: 1 }, { timeouts: 1 }, { mismatches: 1 }]) {
      expect(() => { checkClean('load', { ...clean, ...fault }) }).toThrow(/^load: /)
    }
  })
})
