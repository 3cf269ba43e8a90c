/**
 * Rules the agents' readers impose on what the service stores and answers (docs/compatibility.md),
 * checked over HTTP. The compat suite (test/compat) proves the same against the readers themselves.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { createSession, type Json } from './session-helpers.js'

describe('what the agents need in every entry', () => {
  let app: App
  beforeEach(async () => { app = await buildTestApp() })
  afterEach(async () => { await app.close() })

  const post = (id: string, body: unknown) => app.inject({ method: 'POST', url: `/v1/sessions/${id}/entries`, payload: body as Json })

  it('gives an assistant message without usage (the README example) a zeroed usage, and completes a partial one', async () => {
    const s = await createSession(app)
    const res = await post(s.header.id, {
      entries: [
        { type: 'message', message: { role: 'user', content: 'Why?' } },
        { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'Because.' }], provider: 'openai', model: 'gpt-4o' } },
        { type: 'message', message: { role: 'assistant', content: [], provider: 'openai', model: 'gpt-4o', usage: { input: 3, output: 2, extra: 'kept' } } },
        { type: 'model_usage', usage: { input: 1 } },
      ],
    })
    expect(res.statusCode, res.body).toBe(201)
    const [, first, second, third] = res.json().entries as Json[]
    const zeroCost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 }
    expect((first!.message as Json).usage).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: zeroCost })
    expect((second!.message as Json).usage).toEqual({ input: 3, output: 2, extra: 'kept', cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: zeroCost })
    expect(third!.usage).toEqual({ input: 1, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: zeroCost })
    // What was answered is what is stored.
    const stored = await app.inject({ method: 'GET', url: `/v1/sessions/${s.header.id}/entries/${first!.id as string}` })
    expect(stored.json().message.usage).toEqual((first!.message as Json).usage)
  })

  it('refuses, naming the field, an entry the agents could not read or list (400)', async () => {
    const s = await createSession(app)
    for (const [message, field] of [
      [{ role: 'assistant', content: 'plain text' }, 'message.content'],
      [{ role: 'assistant' }, 'message.content'],
      [{ role: 'assistant', content: [{ type: 'text' }] }, 'message.content[0].text'],
      [{ role: 'assistant', content: [{ type: 'thinking', thinkingSignature: 's' }] }, 'message.content[0].thinking'],
      [{ role: 'assistant', content: [], usage: 5 }, 'message.usage'],
      // The omp reader trims these of a failed turn while it builds the context.
      [{ role: 'assistant', content: [{ type: 'redactedThinking' }], stopReason: 'error' }, 'message.content[0].data'],
      [{ role: 'assistant', content: [{ type: 'thinking', thinking: '', thinkingSignature: 5 }], stopReason: 'error' }, 'message.content[0].thinkingSignature'],
      // Both readers' session lists walk the content of user messages: without a string or an
      // array of blocks the session silently drops out of the agent's list.
      [{ role: 'user' }, 'message.content'],
      [{ role: 'user', content: null }, 'message.content'],
      [{ role: 'user', content: { text: 'hi' } }, 'message.content'],
      [{ role: 'user', content: [null] }, 'message.content[0]'],
      // The omp reader sums the usage of a task tool result while it indexes the file.
      [{ role: 'toolResult', toolCallId: 'c1', toolName: 'task', content: [], details: { usage: [] } }, 'message.details.usage'],
    ] as const) {
      const res = await post(s.header.id, { type: 'message', message })
      expect(res.statusCode, res.body).toBe(400)
      expect(res.json().detail).toContain(field)
    }
    // The same for a model_usage entry's usage record (summed while indexing, like the others).
    for (const usage of [5, 'x', true, []]) {
      const res = await post(s.header.id, { type: 'model_usage', usage })
      expect(res.statusCode, res.body).toBe(400)
      expect(res.json().detail).toContain('usage')
    }
    // What the readers tolerate stays accepted.
    const fine = await post(s.header.id, {
      entries: [
        { type: 'message', message: { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image', data: 'aGk=', mimeType: 'image/png' }] } },
        { type: 'message', message: { role: 'assistant', content: [{ type: 'redactedThinking', data: 'opaque' }, { type: 'thinking', thinking: 't', thinkingSignature: null }], stopReason: 'error' } },
        { type: 'message', message: { role: 'toolResult', toolCallId: 'c1', toolName: 'task', content: [], details: { usage: 'n/a' } } },
        { type: 'model_usage' },
        { type: 'model_usage', usage: null },
      ],
    })
    expect(fine.statusCode, fine.body).toBe(201)
  })

  it('accepts entry types it does not know, stores them untouched and leaves them out of the context', async () => {
    const s = await createSession(app)
    const future = { type: 'some_future_kind', payload: { nested: [1, { a: 'b' }] }, flag: true }
    const res = await post(s.header.id, {
      entries: [{ type: 'message', message: { role: 'user', content: 'hi' } }, future, { type: 'service_tier_change', serviceTier: 'priority' }],
    })
    expect(res.statusCode, res.body).toBe(201)
    const [, stored, tier] = res.json().entries as Json[]
    expect(stored).toMatchObject(future)
    const back = await app.inject({ method: 'GET', url: `/v1/sessions/${s.header.id}/entries/${stored!.id as string}` })
    expect(back.json()).toEqual(stored)
    const context = (await app.inject({ method: 'GET', url: `/v1/sessions/${s.header.id}/context` })).json()
    expect(context.messages).toHaveLength(1)
    expect(context.serviceTier).toEqual({ openai: 'priority', anthropic: 'priority', google: 'priority' })
    const tree = (await app.inject({ method: 'GET', url: `/v1/sessions/${s.header.id}/tree` })).json()
    expect(tree.nodes.map((n: Json) => n.type)).toEqual(['message', 'some_future_kind', 'service_tier_change'])
    expect(tier!.serviceTier).toBe('priority')
  })

  it('reads service tiers as the agents do: per family, and none for null or an unknown name', async () => {
    const s = await createSession(app)
    const tierAfter = async (serviceTier: unknown): Promise<unknown> => {
      expect((await post(s.header.id, { type: 'service_tier_change', serviceTier })).statusCode).toBe(201)
      return (await app.inject({ method: 'GET', url: `/v1/sessions/${s.header.id}/context` })).json().serviceTier
    }
    expect(await tierAfter('flex')).toEqual({ openai: 'flex' })
    expect(await tierAfter({ anthropic: 'priority', openai: 'bogus', other: 'priority' })).toEqual({ anthropic: 'priority' })
    expect(await tierAfter(null)).toBeUndefined()
    expect(await tierAfter('__proto__')).toBeUndefined()
  })
})
