/**
 * Access control and limits through the OpenAPI client, driven by the document: every operation
 * that declares 401 answers it without credentials, every one that declares 403 answers it to a
 * read-only token, 429 once the caller's rate limit is spent, and 503 while the event loop lags.
 * The token routes answer their own statuses with an admin token, and 409 without tokens.
 * Separate servers (access-server.ts) report into the suite's coverage.
 */
import { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAccessServer, type AccessServer } from '../access-server.js'
import { contractClient, type ContractClient } from '../contract-client.js'
import { DOCUMENT } from '../openapi-validator.js'
import { bearer } from '../../helpers/tokens.js'
import { ctx, expectProblem } from './context.js'

/** Keeps the event loop busy for `ms`, as a CPU-bound request would. */
function blockEventLoop (ms: number): void {
  const end = Date.now() + ms
  while (Date.now() < end) {
    // spin
  }
}

interface Operation { method: string, path: string, statuses: Set<string> }

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head'])

function operations (status: string): Operation[] {
  return Object.entries(DOCUMENT.paths).flatMap(([path, item]) => Object.entries(item)
    .filter(([method, op]) => HTTP_METHODS.has(method) && status in op.responses)
    .map(([method, op]) => ({ method: method.toUpperCase(), path, statuses: new Set(Object.keys(op.responses)) })))
}

/** Path parameters of any operation; access is decided before they are looked at. */
const PARAMS = { id: 'any-session', entryId: 'any-entry', hex: '0'.repeat(64) }

type Call = (method: string, path: string, init: Record<string, unknown>) => Promise<{ response: Response, error?: unknown }>

async function send (client: ContractClient, op: Operation, headers: Record<string, string> = {}): Promise<{ response: Response, error?: unknown }> {
  const call = client.request as unknown as Call
  return await call(op.method, op.path, { params: { path: PARAMS }, headers, parseAs: 'text' })
}

/** Sends `op` and checks its answer's status and code (the client checks it against the document). */
async function expectStatus (client: ContractClient, op: Operation, headers: Record<string, string>, status: number, code: string): Promise<void> {
  const result = await send(client, op, headers)
  expect(`${op.method} ${op.path} → ${result.response.status}`).toBe(`${op.method} ${op.path} → ${status}`)
  if (op.method === 'HEAD') return
  const problem = (typeof result.error === 'string' ? JSON.parse(result.error) : result.error) as { code?: string }
  expect(problem.code).toBe(code)
}

export function accessSuite (): void {
  describe('with AUTH_TOKENS_FILE', () => {
    let server: AccessServer
    let client: ContractClient
    beforeAll(async () => {
      server = await startAccessServer()
      client = contractClient(server.baseUrl, ctx.coverage)
    })
    afterAll(async () => { await server.close() })

    it('every operation declaring 401 answers it without credentials, with WWW-Authenticate', async () => {
      const ops = operations('401')
      // Everything under /v1 is protected, so every operation there declares 401.
      const v1 = Object.entries(DOCUMENT.paths).filter(([path]) => path.startsWith('/v1/'))
        .flatMap(([path, item]) => Object.keys(item).filter((m) => HTTP_METHODS.has(m)).map((m) => `${m.toUpperCase()} ${path}`))
      expect(ops.map((op) => `${op.method} ${op.path}`).sort()).toEqual(v1.sort())
      for (const op of ops) await expectStatus(client, op, {}, 401, 'SS_UNAUTHENTICATED')
    })

    it('every operation declaring 403 answers it to a token without the scope', async () => {
      const ops = operations('403')
      expect(ops.map((op) => `${op.method} ${op.path}`)).toContain('POST /v1/sessions/{id}/entries')
      for (const op of ops) await expectStatus(client, op, bearer(server.tokens.secrets.read), 403, 'SS_FORBIDDEN')
    })

    it('the token routes list (200), create (201), refuse a bad body (400), revoke (204) and miss (404)', async () => {
      const admin = { headers: bearer(server.tokens.secrets.admin) }
      const listed = await client.GET('/v1/tokens', admin)
      expect(listed.data?.tokens.every((t) => t.tenant === 'acme')).toBe(true)
      const created = await client.POST('/v1/tokens', { ...admin, body: { scopes: ['read'], name: 'contract' } })
      expect(created.response.status).toBe(201)
      const id = created.data?.token.id as string
      expectProblem(await client.POST('/v1/tokens', { ...admin, body: { scopes: ['read'], expiresAt: '2001-01-01T00:00:00Z' } }), 400, 'SS_INVALID_ARGUMENT')
      expect((await client.DELETE('/v1/tokens/{id}', { ...admin, params: { path: { id } } })).response.status).toBe(204)
      expectProblem(await client.DELETE('/v1/tokens/{id}', { ...admin, params: { path: { id } } }), 404, 'SS_TOKEN_NOT_FOUND')
    })
  })

  describe('without AUTH_TOKENS_FILE', () => {
    it('every operation declaring 421 answers it to a foreign Host (DNS rebinding)', async () => {
      // fetch drops a Host header; set it at the dispatcher, below fetch.
      const rebinding = new Agent().compose((dispatch) => (opts, handler) => {
        // fetch hands the dispatcher its headers as an object of lowercase names.
        expect(Array.isArray(opts.headers)).toBe(false)
        const headers = Object.entries(opts.headers ?? {}).filter(([name]) => name !== 'host')
        return dispatch({ ...opts, headers: [...headers.flat(), 'host', 'rebind.evil.example'] }, handler)
      })
      const client = contractClient(ctx.server.baseUrl, ctx.coverage, async (request) => await fetch(request, { dispatcher: rebinding } as unknown as RequestInit))
      const ops = operations('421')
      expect(ops.map((op) => `${op.method} ${op.path}`)).toContain('GET /healthz')
      try {
        for (const op of ops) await expectStatus(client, op, {}, 421, 'SS_MISDIRECTED_HOST')
      } finally {
        await rebinding.close()
      }
    })

    it('the token routes answer 409 SS_AUTH_DISABLED', async () => {
      for (const op of operations('409').filter((o) => o.path.startsWith('/v1/tokens'))) {
        const body = op.method === 'POST' ? { body: { scopes: ['read'] } } : {}
        const call = ctx.client.request as unknown as Call
        const result = await call(op.method, op.path, { params: { path: PARAMS }, ...body })
        expectProblem(result, 409, 'SS_AUTH_DISABLED')
      }
    })
  })

  describe('with RATE_LIMIT_MAX=1', () => {
    let server: AccessServer
    beforeAll(async () => { server = await startAccessServer({ rateLimitMax: 1, publicRateLimitMax: 1, rateLimitWindowMs: 60_000 }) })
    afterAll(async () => { await server.close() })

    it('every operation declaring 429 answers it once the token (or, on public routes, the address) spent its budget, with Retry-After', async () => {
      const client = contractClient(server.baseUrl, ctx.coverage)
      const admin = bearer(server.tokens.secrets.admin)
      expect((await client.GET('/v1/sessions', { headers: admin })).response.status).toBe(200)
      expect((await client.GET('/healthz')).response.status).toBe(200)
      for (const op of operations('429')) await expectStatus(client, op, admin, 429, 'SS_RATE_LIMITED')
    })
  })

  describe('with MAX_EVENT_LOOP_DELAY_MS=20 while the event loop lags', () => {
    let server: AccessServer
    let lagger: NodeJS.Timeout | undefined
    beforeAll(async () => { server = await startAccessServer({ maxEventLoopDelayMs: 20 }) })
    afterAll(async () => {
      clearInterval(lagger)
      await server.close()
    })

    it('every operation declaring 503 answers it, with Retry-After', { timeout: 60_000 }, async () => {
      const client = contractClient(server.baseUrl, ctx.coverage)
      // Blocks the event loop in 100 ms slices, as a CPU-bound request would.
      lagger = setInterval(() => { blockEventLoop(100) }, 110)
      const admin = bearer(server.tokens.secrets.admin)
      const probe = operations('503').find((op) => op.path === '/v1/sessions' && op.method === 'GET') as Operation
      let status = 0
      for (let i = 0; i < 300 && status !== 503; i++) {
        status = (await send(client, probe, admin)).response.status
        if (status !== 503) await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(status).toBe(503)
      for (const op of operations('503').filter((o) => o.path !== '/readyz')) await expectStatus(client, op, admin, 503, 'SS_OVERLOADED')
      clearInterval(lagger)
    })
  })
}
