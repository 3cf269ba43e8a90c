/**
 * Large answers are streamed, not built whole: a blob is sent from its file and an export from
 * the session file, chunk by chunk with backpressure, and MAX_DOWNLOAD_BYTES_PER_TOKEN bounds
 * the bytes one client may have in flight (429 `SS_TOO_MANY_DOWNLOADS` beyond).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { FileBlobStore } from '../../src/blobs/index.js'
import { sha256Hex } from '../../src/blobs/hash.js'
import type { Config } from '../../src/config.js'
import { MemorySessionStorage } from '../../src/storage/index.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { assistant, message, user } from '../http/session-helpers.js'

let dir: string
let fx: TokenFixture
let agent: Agent
const apps: App[] = []
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ss-downloads-'))
  fx = await tokenFixture()
  agent = new Agent({ pipelining: 0 })
})
afterEach(async () => {
  await agent.destroy()
  for (const app of apps.splice(0)) await app.close()
  fx.cleanup()
  rmSync(dir, { recursive: true, force: true })
})

/** A blob store whose whole-buffer read is forbidden: answers must stream. */
class StreamOnlyBlobStore extends FileBlobStore {
  override async get (): Promise<Buffer | null> { throw new Error('a whole blob was read into memory') }
}

/** Session storage whose whole-file read is forbidden for session files. */
class StreamOnlyStorage extends MemorySessionStorage {
  override async readText (path: string): Promise<string> {
    if (path.endsWith('.jsonl')) throw new Error('a whole session file was read into memory')
    return await super.readText(path)
  }
}

/** With tokens (tenant `acme`), or open (the default tenant: these stores serve it). */
async function app (config: Partial<Config>, extra: { storage?: MemorySessionStorage, open?: boolean } = {}): Promise<{ app: App, base: string }> {
  const { open = false, ...deps } = extra
  const built = await buildTestApp({ ...(open ? {} : { tokens: await fx.load() }), blobs: new StreamOnlyBlobStore(dir), config, ...deps })
  apps.push(built)
  return { app: built, base: await built.listen({ port: 0, host: '127.0.0.1' }) }
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

describe('streamed answers', () => {
  it('sends a blob from its file without reading it whole, with its type, length and bytes', async () => {
    const { app: a, base } = await app({}, { open: true })
    const bytes = Buffer.concat([PNG, Buffer.alloc(3 * 1024 * 1024, 7)])
    const hash = sha256Hex(bytes)
    const put = await a.inject({ method: 'PUT', url: `/v1/blobs/sha256/${hash}`, headers: { ...bearer(fx.secrets.write), 'content-type': 'application/octet-stream' }, payload: bytes })
    expect(put.statusCode, put.body).toBe(201)
    const res = await request(`${base}/v1/blobs/sha256/${hash}`, { headers: bearer(fx.secrets.read), dispatcher: agent })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('image/png')
    expect(res.headers['content-length']).toBe(String(bytes.length))
    expect(Buffer.from(await res.body.arrayBuffer()).equals(bytes)).toBe(true)
    const head = await request(`${base}/v1/blobs/sha256/${hash}`, { method: 'HEAD', headers: bearer(fx.secrets.read), dispatcher: agent })
    expect([head.statusCode, head.headers['content-length']]).toEqual([200, String(bytes.length)])
    await head.body.dump()
  })

  it('exports a saved session from its file without reading it whole', async () => {
    const storage = new StreamOnlyStorage()
    const { app: a, base } = await app({}, { storage, open: true })
    const headers = bearer(fx.secrets.write)
    await a.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { cwd: '/w', id: 'exp' } })
    const big = 'é'.repeat(300_000)
    const appended = await a.inject({ method: 'POST', url: '/v1/sessions/exp/entries', headers, payload: { entries: [message(user(big)), message(assistant('ok'))] } })
    expect(appended.statusCode, appended.body).toBe(201)
    const res = await request(`${base}/v1/sessions/exp/export`, { headers: bearer(fx.secrets.read), dispatcher: agent })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/)
    const lines = (await res.body.text()).trim().split('\n').map((l) => JSON.parse(l) as { type: string, message?: { content: unknown } })
    expect(lines.map((l) => l.type)).toEqual(['session', 'message', 'message'])
    expect(lines[1]?.message?.content).toBe(big)
  })
})

describe('bytes in flight per token (MAX_DOWNLOAD_BYTES_PER_TOKEN)', () => {
  it('refuses a download that would pass the budget while earlier ones are unread; other tokens go on', async () => {
    // Blobs larger than what socket buffers absorb: an unread answer stays in flight.
    const { app: a, base } = await app({ maxDownloadBytesPerToken: 60 * 1024 * 1024, bodyLimit: 64 * 1024 * 1024 })
    const bytes = Buffer.alloc(24 * 1024 * 1024, 1)
    const hash = sha256Hex(bytes)
    await a.inject({ method: 'PUT', url: `/v1/blobs/sha256/${hash}`, headers: { ...bearer(fx.secrets.write), 'content-type': 'application/octet-stream' }, payload: bytes })
    const url = `${base}/v1/blobs/sha256/${hash}`
    // Two unread downloads of 24 MiB hold 48 MiB in flight: a third would pass 60 MiB.
    const first = await request(url, { headers: bearer(fx.secrets.read), dispatcher: new Agent() })
    const second = await request(url, { headers: bearer(fx.secrets.read), dispatcher: new Agent() })
    expect([first.statusCode, second.statusCode]).toEqual([200, 200])
    const third = await request(url, { headers: bearer(fx.secrets.read), dispatcher: agent })
    expect(third.statusCode).toBe(429)
    expect(((await third.body.json()) as { code: string }).code).toBe('SS_TOO_MANY_DOWNLOADS')
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0)
    // Another token has its own budget.
    const other = await request(url, { headers: bearer(fx.secrets.write), dispatcher: agent })
    expect(other.statusCode).toBe(200)
    await other.body.dump()
    // Reading one to the end frees its bytes.
    await first.body.arrayBuffer()
    await new Promise((resolve) => setTimeout(resolve, 100))
    const again = await request(url, { headers: bearer(fx.secrets.read), dispatcher: agent })
    expect(again.statusCode).toBe(200)
    await again.body.dump()
    second.body.destroy()
  })
})
