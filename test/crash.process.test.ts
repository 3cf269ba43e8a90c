/**
 * kill -9 in the middle of 20 concurrent writers: every append the server acknowledged with
 * `persisted: true` is there after a restart on the same DATA_DIR, no id appears twice and
 * every parent exists (API.md "persisted", SPEC.md §8.4, §8.8).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer } from './helpers/server-process.js'

const dataDir = mkdtempSync(join(tmpdir(), 'ss-crash-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

async function call (base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number, json: any }> {
  const res = await request(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.body.text()
  return { status: res.statusCode, json: text === '' ? undefined : JSON.parse(text) }
}

async function allEntries (base: string, id: string): Promise<Array<{ id: string, parentId: string | null }>> {
  const entries: Array<{ id: string, parentId: string | null }> = []
  for (let after: number | null = 0; after !== null;) {
    const page = await call(base, 'GET', `/v1/sessions/${id}/entries?after=${after}&limit=1000`)
    expect(page.status).toBe(200)
    entries.push(...page.json.entries)
    after = page.json.next
  }
  return entries
}

describe('crash safety of acknowledged appends', () => {
  it('after kill -9 during 20 concurrent writers, every persisted append survives a restart', async () => {
    let server = await startServer({ DATA_DIR: dataDir })
    const created = await call(server.baseUrl, 'POST', '/v1/sessions', { cwd: '/crash/test' })
    expect(created.status).toBe(201)
    const id = created.json.header.id as string
    const first = await call(server.baseUrl, 'POST', `/v1/sessions/${id}/entries`, { type: 'message', message: { role: 'assistant', content: 'start', provider: 'p', model: 'm' } })
    expect(first.json.persisted).toBe(true)

    const acknowledged = new Set<string>()
    let stop = false
    const writer = async (w: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await call(server.baseUrl, 'POST', `/v1/sessions/${id}/entries`, { type: 'message', message: { role: 'user', content: `w${w}-${i}` } })
          if (res.status === 201 && res.json.persisted === true) for (const e of res.json.entries) acknowledged.add(e.id)
        } catch {
          return // the server is gone
        }
      }
    }
    const writers = Array.from({ length: 20 }, async (_, w) => await writer(w))
    while (acknowledged.size < 200) await new Promise((resolve) => setTimeout(resolve, 10))
    server.child.kill('SIGKILL')
    const [, signal] = await server.exited
    stop = true
    await Promise.all(writers)
    expect(signal).toBe('SIGKILL')

    server = await startServer({ DATA_DIR: dataDir })
    try {
      const entries = await allEntries(server.baseUrl, id)
      const ids = entries.map((e) => e.id)
      expect(new Set(ids).size).toBe(ids.length)
      for (const acked of acknowledged) expect(ids).toContain(acked)
      const known = new Set(ids)
      for (const e of entries) if (e.parentId !== null) expect(known.has(e.parentId)).toBe(true)
    } finally {
      server.child.kill('SIGTERM')
      const [code] = await server.exited
      expect(code).toBe(0)
    }
  }, 60_000)
})
