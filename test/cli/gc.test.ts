/**
 * `session-store gc --server <url> [--dry-run]`: runs POST /v1/blobs/gc and prints its report;
 * with tokens it needs an admin token of the tenant (SESSION_STORE_TOKEN).
 */
import { createHash, randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { runCli } from '../../src/cli/run.js'
import { buildTestApp } from '../helpers/app.js'
import { tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { memoryIo } from './helpers.js'

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

describe('session-store gc', () => {
  let app: App | undefined
  let fx: TokenFixture | undefined
  afterEach(async () => {
    await app?.close()
    fx?.cleanup()
  })

  const gc = async (base: string, args: string[], env: Record<string, string> = {}) => {
    const { io, stdout, stderr } = memoryIo(env)
    const code = await runCli(['gc', '--server', base, ...args], io)
    return { code, stdout: stdout(), stderr: stderr() }
  }

  it('prints the report of a dry run, then of a collection that removes', async () => {
    app = await buildTestApp({ config: { blobGcGraceMs: 0 } })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const bytes = randomBytes(500)
    await app.inject({ method: 'PUT', url: `/v1/blobs/sha256/${sha(bytes)}`, payload: bytes, headers: { 'content-type': 'application/octet-stream' } })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const dry = await gc(base, ['--dry-run'])
    expect(dry.code).toBe(0)
    expect(JSON.parse(dry.stdout)).toEqual({ scanned: 1, referenced: 0, keptYoung: 0, deleted: 1, bytesFreed: 500 })
    expect(JSON.parse((await gc(base, [])).stdout)).toMatchObject({ deleted: 1 })
    expect(JSON.parse((await gc(base, [])).stdout)).toEqual({ scanned: 0, referenced: 0, keptYoung: 0, deleted: 0, bytesFreed: 0 })
  })

  it('needs --server, and an admin token where the server checks tokens', async () => {
    const { io, stderr } = memoryIo()
    expect(await runCli(['gc'], io)).toBe(2)
    expect(stderr()).toContain('missing --server')
    fx = await tokenFixture()
    app = await buildTestApp({ tokens: await fx.load() })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const refused = await gc(base, [], { SESSION_STORE_TOKEN: fx.secrets.write })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('SS_FORBIDDEN')
    const ran = await gc(base, ['--dry-run'], { SESSION_STORE_TOKEN: fx.secrets.admin })
    expect([ran.code, JSON.parse(ran.stdout).scanned]).toEqual([0, 0])
  })
})
