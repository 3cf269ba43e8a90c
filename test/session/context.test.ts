import { describe, expect, it } from 'vitest'
import { buildSessionContext, emptyContext } from '../../src/session/context.js'
import { buildIndex } from '../../src/session/tree.js'
import type { AgentMessage, SessionEntryBase } from '../../src/session/types.js'
import { assistant, chain, compaction, entry, user } from './helpers.js'

const EMPTY = { messages: [], thinkingLevel: 'off', models: {}, injectedTtsrRules: [], mode: 'none' }

/** Labels context messages: entry ids for message entries, `summary(C)`, `branch(text)`, `custom(type)`. */
function describeMessages (messages: readonly AgentMessage[], entries: readonly SessionEntryBase[]): string[] {
  const byMessage = new Map(entries.filter((e) => e.type === 'message').map((e) => [e.message, e.id]))
  return messages.map((m) => {
    const id = byMessage.get(m)
    if (id !== undefined) return id
    const r = m as Record<string, unknown>
    if (m.role === 'compactionSummary') return `summary(${String(r.summary)})`
    if (m.role === 'branchSummary') return `branch(${String(r.summary)})`
    if (m.role === 'custom') return `custom(${String(r.customType)})`
    return `?${m.role}`
  })
}

function run (entries: SessionEntryBase[], leafId?: string | null): string[] {
  return describeMessages(buildSessionContext(entries, leafId).messages, entries)
}

const branchSummary = (id: string, parentId: string | null, summary: string) =>
  entry('branch_summary', id, parentId, { fromId: parentId ?? 'root', summary })

describe('basics', () => {
  it('§12.55 buildSessionContext([]) equals the empty context', () => {
    expect(buildSessionContext([])).toStrictEqual(EMPTY)
    expect(emptyContext()).toStrictEqual(EMPTY)
    expect(emptyContext()).not.toBe(emptyContext())
  })

  it('§12.55 one user message yields one message, the same object as entry.message', () => {
    const e = user('1', null)
    const ctx = buildSessionContext([e])
    expect(ctx.messages).toHaveLength(1)
    expect(ctx.messages[0]).toBe(e.message)
  })

  it('§7.2 a null leaf gives the empty context', () => {
    expect(buildSessionContext([user('1', null)], null)).toStrictEqual(EMPTY)
  })

  it('§12.56 custom_message attribution and timestamp', () => {
    const withUser = entry('custom_message', 'c1', null, {
      customType: 'todo', content: 'Open todos', display: false, details: { a: 1 }, attribution: 'user',
    })
    withUser.timestamp = '2026-03-14T15:04:07.123Z'
    const [m] = buildSessionContext([withUser]).messages
    expect(m).toStrictEqual({
      role: 'custom',
      customType: 'todo',
      content: 'Open todos',
      display: false,
      details: { a: 1 },
      attribution: 'user',
      timestamp: 1773500647123,
    })
    const plain = entry('custom_message', 'c2', null, { customType: 't', content: [{ type: 'text', text: 'x' }], display: true })
    const [p] = buildSessionContext([plain]).messages
    expect(p).not.toHaveProperty('attribution')
    expect(p).not.toHaveProperty('details')
    expect(p!.timestamp).toBe(Date.parse(plain.timestamp))
  })

  it('§7.3 an unparseable timestamp gives NaN', () => {
    const e = entry('custom_message', 'c', null, { customType: 't', content: 'x', display: true })
    e.timestamp = 'yesterday-ish'
    expect(buildSessionContext([e]).messages[0]!.timestamp).toBeNaN()
  })

  it('§12.57 u/a/u/a gives 4 messages in order; a thinking_level_change("high") sets the level', () => {
    const list = chain(user('1', null), assistant('2', null), user('3', null), assistant('4', null))
    expect(run(list)).toEqual(['1', '2', '3', '4'])
    const withLevel = chain(user('1', null), assistant('2', null),
      entry('thinking_level_change', 't', null, { thinkingLevel: 'high' }), user('3', null), assistant('4', null))
    const ctx = buildSessionContext(withLevel)
    expect(ctx.thinkingLevel).toBe('high')
    expect(describeMessages(ctx.messages, withLevel)).toEqual(['1', '2', '3', '4'])
  })

  it('§12.58 a lone assistant sets models.default; a legacy model_change {provider, modelId} has no effect', () => {
    expect(buildSessionContext([assistant('1', null)]).models).toStrictEqual({ default: 'anthropic/claude-test' })
    const legacy = chain(entry('model_change', 'm', null, { provider: 'openai', modelId: 'gpt-4' }), user('2', null))
    expect(buildSessionContext(legacy).models).toStrictEqual({})
  })

  it('§12.59 an explicit default beats assistants; role smol sets models.smol only', () => {
    const list = chain(entry('model_change', 'm', null, { model: 'openai/gpt-4' }), assistant('2', null))
    expect(buildSessionContext(list).models).toStrictEqual({ default: 'openai/gpt-4' })
    const after = chain(assistant('1', null), entry('model_change', 'm', null, { model: 'openai/gpt-4', role: 'default' }))
    expect(buildSessionContext(after).models).toStrictEqual({ default: 'openai/gpt-4' })
    const smol = chain(entry('model_change', 'm', null, { model: 'openai/gpt-4o-mini', role: 'smol' }))
    expect(buildSessionContext(smol).models).toStrictEqual({ smol: 'openai/gpt-4o-mini' })
  })

  it('§7.2 the assistant default uses the last assistant with non-empty provider and model', () => {
    const list = chain(assistant('1', null, 'openai', 'gpt-4o'), assistant('2', null, '', 'x'), assistant('3', null, 'p', ''))
    expect(buildSessionContext(list).models).toStrictEqual({ default: 'openai/gpt-4o' })
    const empty = chain(entry('model_change', 'm', null, { model: '' }), assistant('1', null))
    expect(buildSessionContext(empty).models).toStrictEqual({ default: 'anthropic/claude-test' })
  })

  it('§12.61 a branch_summary with an empty summary emits nothing', () => {
    const list = chain(user('1', null), branchSummary('b', '1', ''), user('2', null))
    expect(run(list)).toEqual(['1', '2'])
  })
})

describe('§12.60 worked examples of §7.4', () => {
  it('example 1: compaction keeps from firstKept onward', () => {
    const list = chain(user('1', null), assistant('2', null), user('3', null), assistant('4', null),
      compaction('C5', null, '3'), user('6', null), assistant('7', null))
    expect(run(list, '7')).toEqual(['summary(summary C5)', '3', '4', '6', '7'])
    const [summary] = buildSessionContext(list, '7').messages
    expect(summary).toStrictEqual({
      role: 'compactionSummary', summary: 'summary C5', tokensBefore: 1000, timestamp: Date.parse(list[4]!.timestamp),
    })
  })

  it('example 2: compaction as leaf', () => {
    const list = chain(user('1', null), assistant('2', null), compaction('C3', null, '1', { shortSummary: 'short' }))
    expect(run(list, 'C3')).toEqual(['summary(summary C3)', '1', '2'])
    expect(buildSessionContext(list, 'C3').messages[0]).toMatchObject({ shortSummary: 'short' })
  })

  it('example 3: only the last compaction counts', () => {
    const list = chain(user('1', null), assistant('2', null), user('3', null), assistant('4', null),
      compaction('C5', null, '3'), user('6', null), assistant('7', null), compaction('C8', null, '6'), user('9', null))
    expect(run(list)).toEqual(['summary(summary C8)', '6', '7', '9'])
  })

  it('example 4: branches', () => {
    const list = [...chain(user('1', null), assistant('2', null), user('3', null)), user('4', '2')]
    expect(run(list, '3')).toEqual(['1', '2', '3'])
    expect(run(list, '4')).toEqual(['1', '2', '4'])
  })

  it('example 5: branchWithSummary', () => {
    const list = [
      ...chain(user('1', null), assistant('2', null), user('3', null), assistant('4', null)),
      branchSummary('B5', '2', 'tried X'), user('6', 'B5'),
    ]
    expect(run(list, '6')).toEqual(['1', '2', 'branch(tried X)', '6'])
    const msg = buildSessionContext(list, '6').messages[2]
    expect(msg).toStrictEqual({ role: 'branchSummary', summary: 'tried X', fromId: '2', timestamp: Date.parse(list[4]!.timestamp) })
  })

  it('example 6: complex tree', () => {
    const list = [
      ...chain(user('1', null), assistant('2', null), user('3', null), assistant('4', null),
        compaction('C5', null, '3'), user('6', null), assistant('7', null)),
      user('8', '3'), assistant('9', '8'),
      branchSummary('B10', '3', 'Tried wrong approach'), user('11', 'B10'),
    ]
    expect(run(list, '7')).toEqual(['summary(summary C5)', '3', '4', '6', '7'])
    expect(run(list, '11')).toEqual(['1', '2', '3', 'branch(Tried wrong approach)', '11'])
    expect(run(list, '9')).toEqual(['1', '2', '3', '8', '9'])
  })

  it('example 7: unknown leaf falls back to the last entry; an orphan leaf', () => {
    const list = [...chain(user('1', null), assistant('2', null)), user('3', '1')]
    expect(run(list, 'zzz')).toEqual(['1', '3'])
    expect(run(list)).toEqual(['1', '3'])
    const orphan = [...list, user('9', 'gone')]
    expect(run(orphan, '9')).toEqual(['9'])
  })

  it('example 8: state', () => {
    const m2 = entry('model_change', 'M2', null, { model: 'openai/gpt-4o' })
    const tail = [
      assistant('3', null, 'anthropic', 'claude-sonnet-4-5'),
      entry('model_change', 'M4', null, { model: 'openai/gpt-4o-mini', role: 'smol' }),
      entry('thinking_level_change', 'T5', null, { thinkingLevel: 'high' }),
      entry('ttsr_injection', 'R6', null, { injectedRules: ['r1', 'r2'] }),
      entry('ttsr_injection', 'R7', null, { injectedRules: ['r2', 'r3'] }),
      entry('mode_change', 'D8', null, { mode: 'review', data: { strict: true } }),
      entry('thinking_level_change', 'T9', null, { thinkingLevel: null }),
      entry('custom', 'X10', null, { customType: 'x', data: {} }),
      entry('session_init', 'S11', null, { systemPrompt: 's', task: 't', tools: [] }),
    ]
    const list = chain(user('1', null), m2, ...tail)
    const ctx = buildSessionContext(list)
    expect(describeMessages(ctx.messages, list)).toEqual(['1', '3'])
    expect({ ...ctx, messages: [] }).toStrictEqual({
      messages: [],
      thinkingLevel: 'off',
      models: { default: 'openai/gpt-4o', smol: 'openai/gpt-4o-mini' },
      injectedTtsrRules: ['r1', 'r2', 'r3'],
      mode: 'review',
      modeData: { strict: true },
    })
    const without = chain(user('1', null), ...tail.map((e) => ({ ...e })))
    expect(buildSessionContext(without).models).toStrictEqual({
      default: 'anthropic/claude-sonnet-4-5', smol: 'openai/gpt-4o-mini',
    })
  })

  it('example 9: cycle, foreign kept id, remote compaction', () => {
    const cycle = [user('a', 'b'), assistant('b', 'a')]
    expect(run(cycle, 'a')).toEqual(['b', 'a'])

    const foreign = [
      ...chain(user('1', null), assistant('2', null), user('3', null), compaction('C4', null, 'x'), user('5', null)),
      user('x', '1'),
    ]
    expect(run(foreign, '5')).toEqual(['summary(summary C4)', '5'])

    const history = [{ type: 'message', role: 'user', content: 'h' }]
    const remote = chain(user('1', null), assistant('2', null), user('3', null),
      compaction('C4', null, '1', { preserveData: { openaiRemoteCompaction: { provider: 'openai', replacementHistory: history } } }),
      user('5', null))
    const ctx = buildSessionContext(remote)
    expect(describeMessages(ctx.messages, remote)).toEqual(['summary(summary C4)', '5'])
    expect(ctx.messages[0]).toMatchObject({
      providerPayload: { type: 'openaiResponsesHistory', provider: 'openai', items: history },
    })
  })
})

describe('compaction edge cases', () => {
  it('§7.2 a kept id that is the compaction itself or absent keeps nothing before it', () => {
    const own = chain(user('1', null), compaction('C2', null, 'C2'), user('3', null))
    expect(run(own)).toEqual(['summary(summary C2)', '3'])
    const absent = chain(user('1', null), compaction('C2', null, undefined), user('3', null))
    expect(run(absent)).toEqual(['summary(summary C2)', '3'])
  })

  it('§7.2 an invalid remote payload falls back to firstKeptEntryId', () => {
    for (const remote of [{ provider: '', replacementHistory: [] }, { provider: 'openai', replacementHistory: {} }, 'x']) {
      const list = chain(user('1', null), compaction('C2', null, '1', { preserveData: { openaiRemoteCompaction: remote } }))
      const ctx = buildSessionContext(list)
      expect(describeMessages(ctx.messages, list)).toEqual(['summary(summary C2)', '1'])
      expect(ctx.messages[0]).not.toHaveProperty('providerPayload')
    }
  })

  it('§7.2 mode_change without data drops earlier modeData', () => {
    const list = chain(entry('mode_change', 'a', null, { mode: 'review', data: { x: 1 } }), entry('mode_change', 'b', null, { mode: 'plan' }))
    const ctx = buildSessionContext(list)
    expect(ctx.mode).toBe('plan')
    expect(ctx).not.toHaveProperty('modeData')
  })

  it('§7.1 uses the given byId index (later duplicate wins)', () => {
    const list = [user('1', null), user('2', '1'), user('2', null)]
    expect(run(list, '2')).toEqual(['2'])
    const ctx = buildSessionContext(list, '2', buildIndex(list.slice(0, 2)))
    expect(describeMessages(ctx.messages, list.slice(0, 2))).toEqual(['1', '2'])
  })
})

describe('deep chains', () => {
  it('buildSessionContext handles a 100,000-entry chain', () => {
    const n = 100_000
    const list: SessionEntryBase[] = []
    for (let i = 0; i < n; i++) {
      list.push({
        type: 'message',
        id: `e${i}`,
        parentId: i === 0 ? null : `e${i - 1}`,
        timestamp: '2026-03-14T15:00:00.000Z',
        message: { role: i % 2 === 0 ? 'user' : 'assistant', content: 'x' },
      })
    }
    const ctx = buildSessionContext(list)
    expect(ctx.messages).toHaveLength(n)
    expect(ctx.messages[0]).toBe(list[0]!.message)
    expect(ctx.messages[n - 1]).toBe(list[n - 1]!.message)
  })
})
