import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { startScriptServer, type ServerHandle } from '../../bench/lib/processes.js'

describe('the durable floor of the append benchmarks', () => {
  const dirs: string[] = []
  const servers: ServerHandle[] = []
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(async (s) => { await s.stop() }))
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it.each([[[] as string[]], [['--fastify']]])('answers each append once its line is in its file (%j)', async (flags) => {
    const dir = mkdtempSync(join(tmpdir(), 'floor-test-'))
    dirs.push(dir)
    const server = await startScriptServer('bench/lib/durable-floor.ts', [dir, ...flags])
    servers.push(server)
    const bodies = Array.from({ length: 20 }, (_, i) => ({ type: 'message', n: i, text: `line ${i}` }))
    const answers = await Promise.all(bodies.map(async (body) => {
      const res = await fetch(`${server.baseUrl}/files/3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body, null, 1) })
      return { status: res.status, text: await res.text() }
    }))
    for (const answer of answers) expect(answer).toEqual({ status: 201, text: '{"persisted":true}' })
    const [root] = readdirSync(dir)
    const lines = readFileSync(join(dir, root as string, '3.jsonl'), 'utf8').split('\n')
    expect(lines.pop()).toBe('')
    expect(lines.map((l) => JSON.parse(l) as unknown).sort((a, b) => (a as { n: number }).n - (b as { n: number }).n)).toEqual(bodies)
    expect(lines.every((l) => !l.includes('\n') && !l.includes(' "'))).toBe(true) // one compact line each
    // Only a number names a file: nothing is written outside the floor's directory.
    const outside = await fetch(`${server.baseUrl}/files/..%2F..%2Fescaped`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(outside.status).toBe(404)
    expect(readdirSync(dir)).toEqual([root])
  }, 60_000)
})
