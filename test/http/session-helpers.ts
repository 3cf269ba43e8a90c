/**
 * Shorthands for the HTTP tests: messages, and requests that create sessions and append
 * entries through `app.inject`.
 */
import { expect } from 'vitest'
import type { App } from '../../src/app.js'
import type { AppendResult, SessionView } from '../../src/registry/session-registry.js'

export type Json = Record<string, unknown>

export function user (text = 'hi'): Json {
  return { role: 'user', content: text, timestamp: Date.now() }
}

export function assistant (text = 'ok'): Json {
  return {
    role: 'assistant',
    content: [{ type: 'text', text }],
    provider: 'anthropic',
    model: 'claude-test',
    usage: { input: 1, output: 1 },
    stopReason: 'stop',
    timestamp: Date.now(),
  }
}

export const message = (m: Json): Json => ({ type: 'message', message: m })

export async function createSession (app: App, body: Json = { cwd: '/work/p' }): Promise<SessionView> {
  const res = await app.inject({ method: 'POST', url: '/v1/sessions', payload: body })
  expect(res.statusCode, res.body).toBe(201)
  return res.json<SessionView>()
}

export async function append (app: App, id: string, body: unknown, headers: Record<string, string> = {}): Promise<AppendResult> {
  const res = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/entries`, payload: body as Json, headers })
  expect(res.statusCode, res.body).toBe(201)
  return res.json<AppendResult>()
}

/** A session with a user and an assistant message: persisted, two entries. */
export async function persistedSession (app: App, cwd = '/work/p'): Promise<{ session: SessionView, ids: string[] }> {
  const session = await createSession(app, { cwd })
  const result = await append(app, session.header.id, { entries: [message(user('hello')), message(assistant('hi there'))] })
  expect(result.persisted).toBe(true)
  return { session, ids: result.entries.map((e) => e.id) }
}

export async function getSession (app: App, id: string): Promise<SessionView> {
  const res = await app.inject({ method: 'GET', url: `/v1/sessions/${id}` })
  expect(res.statusCode, res.body).toBe(200)
  return res.json<SessionView>()
}
