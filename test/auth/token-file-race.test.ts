/**
 * Every writer of the token file takes the same lock (`<file>.lock`, src/lock-file.ts): a
 * revocation by the CLI in another process, raced with token creation through `/v1/tokens`,
 * is never undone by the creation's read-modify-write, and no created token is lost either.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { addToken, readTokenFileOrEmpty } from '../../src/auth/tokens.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { problemOf } from '../helpers/problem.js'

const ROUNDS = 6
const PER_ROUND = 12
const REVOKER = join(import.meta.dirname, '..', 'helpers', 'token-revoker.ts')

let fx: TokenFixture
let app: App
afterEach(async () => {
  await app.close()
  fx.cleanup()
})

interface Revoker {
  /** Starts revoking `ids`; resolves when they are all revoked. */
  revoke(ids: string[]): Promise<void>
  /** Ends the revoker; it must exit 0 without a word on stderr. */
  end(): Promise<void>
}

/** Starts the revoker on `file`; resolves once it is ready. */
async function revoker (file: string): Promise<Revoker> {
  const child = spawn(process.execPath, ['--import', 'tsx', REVOKER, file], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve))
  const waitFor = async (count: number, word: string): Promise<void> => {
    while (out.split('\n').filter((l) => l === word).length < count) {
      if (child.exitCode !== null) throw new Error(`revoker failed: ${err}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  await waitFor(1, 'ready')
  let rounds = 0
  return {
    revoke: async (ids) => {
      child.stdin.write(ids.join(' ') + '\n')
      await waitFor(++rounds, 'done')
    },
    end: async () => {
      child.stdin.end()
      const code = await exited
      expect({ code, err }).toEqual({ code: 0, err: '' })
    },
  }
}

describe('token file writers share one lock', () => {
  it(`a revocation raced with API token creation stays revoked (${ROUNDS} rounds of ${PER_ROUND})`, { timeout: 180_000 }, async () => {
    fx = await tokenFixture()
    app = await buildTestApp({ tokens: await fx.load() })
    const cli = await revoker(fx.path)
    for (let round = 0; round < ROUNDS; round++) {
      const victims = await Promise.all(Array.from({ length: PER_ROUND }, async () => await addToken(fx.path, { tenant: 'acme', scopes: ['read'] })))
      await app.tokens?.reload()
      const revoking = cli.revoke(victims.map((v) => v.token.id))
      const created: string[] = []
      for (let i = 0; i < PER_ROUND; i++) {
        const res = await app.inject({ method: 'POST', url: '/v1/tokens', headers: bearer(fx.secrets.admin), payload: { scopes: ['read'] } })
        expect(res.statusCode).toBe(201)
        created.push(res.json().secret as string)
      }
      await revoking
      await app.tokens?.reload() // what SIGHUP does after the CLI's change
      const ids = new Set((await readTokenFileOrEmpty(fx.path)).tokens.map((t) => t.id))
      expect(victims.filter((v) => ids.has(v.token.id)).map((v) => v.token.id), `round ${round}: revoked tokens back in the file`).toEqual([])
      for (const victim of victims) {
        const res = await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(victim.secret) })
        expect(problemOf(res)).toEqual({ status: 401, code: 'SS_UNAUTHENTICATED' })
      }
      for (const secret of created) {
        const res = await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(secret) })
        expect(res.statusCode, `round ${round}: a created token was lost`).toBe(200)
      }
    }
    await cli.end()
  })
})
