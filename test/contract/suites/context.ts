/**
 * What every part of the OpenAPI-client suite shares: the server, the checking client and the
 * coverage, set up once by openapi-client.test.ts, plus shorthands that make sessions through
 * the client (so that they are checked too).
 */
import { expect } from 'vitest'
import type { ContractClient } from '../contract-client.js'
import { FIXTURES, type ContractServer } from '../contract-server.js'
import type { components } from '../openapi-types.js'
import type { Coverage } from '../openapi-validator.js'

export type Session = components['schemas']['Session']
export type Entry = components['schemas']['Entry']

export interface SuiteContext {
  server: ContractServer
  client: ContractClient
  coverage: Coverage
}

/** Filled in by the test file's `beforeAll`; read only inside tests. */
export const ctx = {} as SuiteContext

export const STALE = '"stale-etag"'
export const UNKNOWN = 'no-such-session'

/** The sessions every route of one session answers 404, 422 and 507 for, with the code of each. */
export const FAILING: Array<[string, number, `SS_${string}`]> = [
  [UNKNOWN, 404, 'SS_SESSION_NOT_FOUND'],
  [FIXTURES.tooNew.id, 422, 'SS_SESSION_VERSION_TOO_NEW'],
  [FIXTURES.unreadable.id, 507, 'SS_STORAGE_FAILED'],
]

export const userMessage = (text: string) => ({ type: 'message' as const, message: { role: 'user', content: text, timestamp: 1 } })
export const assistantMessage = (text: string) => ({
  type: 'message' as const,
  message: {
    role: 'assistant',
    content: [{ type: 'text', text }],
    provider: 'anthropic',
    model: 'claude-test',
    usage: { input: 1, output: 1 },
    stopReason: 'stop',
    timestamp: 1,
  },
})

let cwds = 0
/** A cwd no other test uses. */
export const freshCwd = (): string => `/contract/p${++cwds}`

export async function createSession (cwd = freshCwd()): Promise<Session> {
  const { data, response } = await ctx.client.POST('/v1/sessions', { body: { cwd } })
  expect(response.status).toBe(201)
  return data as Session
}

/** A session with a user and an assistant message (persisted) and their entry ids. */
export async function persistedSession (cwd = freshCwd()): Promise<{ id: string, ids: string[], etag: string }> {
  const session = await createSession(cwd)
  const id = session.header.id
  const { data, response } = await ctx.client.POST('/v1/sessions/{id}/entries', {
    params: { path: { id } }, body: { entries: [userMessage('hello'), assistantMessage('hi')] },
  })
  expect(response.status).toBe(201)
  expect(data?.persisted).toBe(true)
  return { id, ids: (data?.entries ?? []).map((e) => e.id), etag: response.headers.get('etag') as string }
}

/** A failed call: its status and the `SS_` code of its problem body. */
export function expectProblem (result: { response: Response, error?: unknown }, status: number, code: `SS_${string}`): void {
  expect({ status: result.response.status, code: (result.error as { code?: unknown } | undefined)?.code }).toEqual({ status, code })
}

/** A failed `HEAD`: its status and a problem content type (the body, and so its code, is not sent). */
export function expectHeadProblem (result: { response: Response }, status: number): void {
  expect(result.response.status).toBe(status)
  expect(result.response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
}
