/**
 * `import`, `export` and `tail` against a server that checks tokens: the secret comes from
 * SESSION_STORE_TOKEN and goes out as `Authorization: Bearer`; without it the server's 401 is
 * reported with its code and the command exits 1.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { runCli } from '../../src/cli/run.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { FIXTURES, memoryIo, waitUntil } from './helpers.js'
import { problemOf } from '../helpers/problem.js'

const V1 = join(FIXTURES, 'pi-v1-before-compaction.jsonl')
const V1_ID = 'ffae836b-9420-4060-ac13-7745215f90ff'

let fx: TokenFixture
let app: App
let base: string
beforeAll(async () => {
  fx = await tokenFixture()
  app = await buildTestApp({ tokens: await fx.load() })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
})
afterAll(async () => {
  await app.close()
  fx.cleanup()
})

async function run (args: string[], env: Record<string, string> = {}, signal?: AbortSignal): Promise<{ code: number | 'serving', stdout: string, stderr: string }> {
  const { io, stdout, stderr } = memoryIo(env, undefined, false, signal)
  const code = await runCli(args, io)
  return { code, stdout: stdout(), stderr: stderr() }
}

describe('a server that checks tokens', () => {
  it('refuses import without SESSION_STORE_TOKEN, reporting the 401 and its code, and stops at the first file', async () => {
    const res = await run(['import', V1, V1, V1, '--server', base])
    expect(res.code).toBe(1)
    expect(res.stderr.match(/HTTP 401 SS_UNAUTHENTICATED/g)).toHaveLength(1)
    expect(res.stdout).toBe('imported 0 of 3 files, 1 failed (access denied: 2 not attempted)\n')
  })

  it('reports a read-only token refused an import with 403', async () => {
    const res = await run(['import', V1, '--server', base], { SESSION_STORE_TOKEN: fx.secrets.read })
    expect(res.code).toBe(1)
    expect(res.stderr).toContain('HTTP 403 SS_FORBIDDEN')
  })

  it('imports, exports and tails with the token of SESSION_STORE_TOKEN, in its tenant', async () => {
    const env = { SESSION_STORE_TOKEN: fx.secrets.write }
    const imported = await run(['import', V1, '--server', base], env)
    expect([imported.code, imported.stderr]).toEqual([0, ''])
    expect(imported.stdout).toContain(`as ${V1_ID}`)

    // The session landed in the token's tenant: another tenant's admin cannot see it.
    const other = await app.inject({ method: 'GET', url: `/v1/sessions/${V1_ID}`, headers: bearer(fx.secrets.globex) })
    expect(problemOf(other)).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })

    const exported = await run(['export', V1_ID, '--server', base], { SESSION_STORE_TOKEN: fx.secrets.read })
    expect(exported.code).toBe(0)
    const stored = await app.inject({ method: 'GET', url: `/v1/sessions/${V1_ID}/export`, headers: bearer(fx.secrets.read) })
    expect(exported.stdout).toBe(stored.body)

    const stop = new AbortController()
    const { io, stdout } = memoryIo({ SESSION_STORE_TOKEN: fx.secrets.read }, undefined, false, stop.signal)
    const tail = runCli(['tail', V1_ID, '--server', base, '--after', '1000'], io)
    await waitUntil(() => stdout().split('\n').length > 2, 'the last two entries')
    stop.abort()
    expect(await tail).toBe(0)
    const lines = stdout().trim().split('\n').map((line) => JSON.parse(line))
    expect(lines).toHaveLength(2)
  })
})
