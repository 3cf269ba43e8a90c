import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { runCannon } from '../../bench/lib/cannon.js'

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
