/**
 * Appends and labels of a SessionManager (SPEC.md §6.4) and size control as the manager applies
 * it (§9.1, §9.2). Acceptance scenarios 29, 35–39 and 71.
 */
import { describe, expect, it } from 'vitest'
import type { SessionEntryBase } from '../../src/session/types.js'
import { ids, useManagerEnv } from '../helpers/manager-env.js'
import { assistant, user } from '../helpers/session-env.js'

const NOTICE = '\n\n[Session persistence truncated large content]'

const { env, create, open } = useManagerEnv()
const textOf = (entry: SessionEntryBase | undefined) => (entry?.message as { content?: unknown } | undefined)?.content

describe('appends (SPEC.md §6.4)', () => {
  it('§12.29 each append kind creates a child of the previous leaf and becomes the leaf', async () => {
    const m = await create()
    const first = m.appendMessage(user('first'))
    expect(m.getEntry(first)!.parentId).toBeNull()
    const kinds: Array<[string, () => string]> = [
      ['message', () => m.appendMessage(assistant())],
      ['thinking_level_change', () => m.appendThinkingLevelChange('high')],
      ['model_change', () => m.appendModelChange('openai/gpt-4o', 'smol')],
      ['compaction', () => m.appendCompaction('sum', 'short', first, 123, { d: 1 }, true, { p: 1 })],
      ['custom', () => m.appendCustomEntry('todo', { open: 2 })],
      ['custom_message', () => m.appendCustomMessageEntry('todo', 'text', true, { x: 1 }, 'user')],
      ['label', () => m.appendLabelChange(first, 'start')],
      ['ttsr_injection', () => m.appendTtsrInjection(['r1'])],
      ['session_init', () => m.appendSessionInit({ systemPrompt: 'sp', task: 't', tools: ['read'] })],
      ['mode_change', () => m.appendModeChange('review', { strict: true })],
    ]
    const chain = [first]
    for (const [type, run] of kinds) {
      const before = m.getLeafId()
      const count = m.getEntries().length
      const id = run()
      const entry = m.getEntry(id)!
      expect(entry.type).toBe(type)
      expect(entry.parentId).toBe(before)
      expect(m.getLeafId()).toBe(id)
      expect(m.getLeafEntry()).toBe(entry)
      expect(m.getEntries()).toHaveLength(count + 1)
      chain.push(id)
    }
    expect(ids(m.getBranch())).toEqual(chain)
    await m.flush()
    const disk = env.readJsonl(m.getSessionFile()!).slice(1)
    expect(disk.map((r) => [r.id, r.parentId])).toEqual(m.getEntries().map((e) => [e.id, e.parentId]))
  })

  it('§12.38 defaults: thinkingLevel null, no model role key, custom_message attribution "agent"', async () => {
    const m = await create()
    m.appendMessage(assistant())
    const t = m.appendThinkingLevelChange()
    const mc = m.appendModelChange('openai/gpt-4o')
    const cm = m.appendCustomMessageEntry('ext', 'hello', false)
    expect(m.getEntry(t)!.thinkingLevel).toBeNull()
    expect(Object.hasOwn(m.getEntry(t)!, 'thinkingLevel')).toBe(true)
    expect(Object.hasOwn(m.getEntry(mc)!, 'role')).toBe(false)
    expect(m.getEntry(cm)!.attribution).toBe('agent')
    expect(Object.hasOwn(m.getEntry(cm)!, 'details')).toBe(false)
    // The generic append used for HTTP batches applies the same defaults (§3.5, §6.4).
    const generic = m.appendEntry({ type: 'custom_message', customType: 'ext', content: 'x', display: true })
    expect(m.getEntry(generic)!.attribution).toBe('agent')
    const level = m.appendEntry({ type: 'thinking_level_change' })
    expect(m.getEntry(level)!.thinkingLevel).toBeNull()
    await m.flush()
    const disk = new Map(env.readJsonl(m.getSessionFile()!).map((r) => [r.id, r]))
    expect(disk.get(t)).toHaveProperty('thinkingLevel', null)
    expect(disk.get(mc)).toMatchObject({ type: 'model_change', model: 'openai/gpt-4o' })
    expect(Object.hasOwn(disk.get(mc)!, 'role')).toBe(false)
    expect(disk.get(cm)).toMatchObject({ type: 'custom_message', customType: 'ext', content: 'hello', display: false, attribution: 'agent' })
  })

  it('§12.39 appendMessage with role compactionSummary (or branchSummary) fails INVALID_ARGUMENT and appends nothing', async () => {
    const m = await create()
    const a = m.appendMessage(assistant())
    await m.flush()
    const lines = env.readJsonl(m.getSessionFile()!).length
    for (const role of ['compactionSummary', 'branchSummary']) {
      expect(() => m.appendMessage({ role, summary: 's', tokensBefore: 1, timestamp: 1 }))
        .toThrow(expect.objectContaining({ code: 'SS_INVALID_ARGUMENT' }))
    }
    expect(ids(m.getEntries())).toEqual([a])
    expect(m.getLeafId()).toBe(a)
    await m.flush()
    expect(env.readJsonl(m.getSessionFile()!)).toHaveLength(lines)
    expect(m.getLatchedError()).toBeUndefined()
  })

  it('§12.37 a custom entry between two messages sits in the tree and is skipped by the context; providerPayload survives a reload', async () => {
    const m = await create()
    const u = m.appendMessage(user('question'))
    const c = m.appendCustomEntry('tracker', { open: 1 })
    const payload = { type: 'openaiResponsesHistory', items: [{ id: 'rs_1', encrypted: 'abc', nested: [1, { deep: null }] }] }
    const a = m.appendMessage({ ...assistant('answer'), providerPayload: payload })
    expect(m.getEntry(c)!.parentId).toBe(u)
    expect(m.getEntry(a)!.parentId).toBe(c)
    expect(m.getChildren(u).map((e) => e.id)).toEqual([c])
    const [root] = m.getTree()
    expect(root!.entry.id).toBe(u)
    expect(root!.children.map((n) => n.entry.id)).toEqual([c])
    expect(root!.children[0]!.children.map((n) => n.entry.id)).toEqual([a])
    const messages = m.buildSessionContext().messages
    expect(messages).toEqual([m.getEntry(u)!.message, m.getEntry(a)!.message])
    await m.close()
    const reopened = await open(m.getSessionFile()!)
    expect((reopened.getEntry(a)!.message as Record<string, unknown>).providerPayload).toEqual(payload)
    expect(reopened.getEntry(c)).toMatchObject({ type: 'custom', customType: 'tracker', data: { open: 1 } })
  })
})

describe('labels (SPEC.md §3.5, §6.4)', () => {
  it('§12.35 appendLabelChange stores targetId/label; getLabel and the tree show it; labels never reach the context', async () => {
    const m = await create()
    const t = m.appendMessage(user('target'))
    const a = m.appendMessage(assistant())
    const l = m.appendLabelChange(t, 'checkpoint')
    const entry = m.getEntry(l)!
    expect(entry).toMatchObject({ type: 'label', targetId: t, label: 'checkpoint', parentId: a })
    expect(m.getLabel(t)).toBe('checkpoint')
    expect(m.getLabel(a)).toBeUndefined()
    const [root] = m.getTree()
    expect(root!.entry.id).toBe(t)
    expect(root!.label).toBe('checkpoint')
    expect(root!.children[0]!.label).toBeUndefined()
    const context = m.buildSessionContext()
    expect(m.getLeafId()).toBe(l)
    expect(context.messages).toEqual([m.getEntry(t)!.message, m.getEntry(a)!.message])
    await m.close()
    expect(env.readJsonl(m.getSessionFile()!).find((r) => r.id === l)).toMatchObject({ targetId: t, label: 'checkpoint' })
    const reopened = await open(m.getSessionFile()!)
    expect(reopened.getLabel(t)).toBe('checkpoint')
    expect(reopened.getTree()[0]!.label).toBe('checkpoint')
  })

  it('§12.36 undefined or "" clears a label, the last label wins, an unknown target throws Entry non-existent not found', async () => {
    const m = await create()
    const t = m.appendMessage(user())
    m.appendLabelChange(t, 'one')
    m.appendLabelChange(t, 'two')
    expect(m.getLabel(t)).toBe('two')
    const cleared = m.appendLabelChange(t)
    expect(Object.hasOwn(m.getEntry(cleared)!, 'label')).toBe(false)
    expect(m.getLabel(t)).toBeUndefined()
    m.appendLabelChange(t, 'three')
    expect(m.getLabel(t)).toBe('three')
    m.appendLabelChange(t, '')
    expect(m.getLabel(t)).toBeUndefined()
    expect(m.getTree()[0]!.label).toBeUndefined()
    m.appendLabelChange(t, 'last')
    const before = m.getEntries()
    const leaf = m.getLeafId()
    expect(() => m.appendLabelChange('non-existent', 'x')).toThrow('Entry non-existent not found')
    expect(() => m.appendLabelChange('non-existent', 'x')).toThrow(expect.objectContaining({ code: 'SS_ENTRY_NOT_FOUND' }))
    expect(m.getEntries()).toEqual(before)
    expect(m.getLeafId()).toBe(leaf)
    expect(m.getLabel(t)).toBe('last')
    m.appendMessage(assistant())
    await m.close()
    expect((await open(m.getSessionFile()!)).getLabel(t)).toBe('last')
  })
})

describe('size control seen through the manager (SPEC.md §9.1, §9.2)', () => {
  it('§12.71 a 600,000-unit string is stored as 500,000 units ending with the notice, 500,000 units unchanged; memory keeps the full value', async () => {
    const m = await create()
    const big = 'a'.repeat(600_000)
    const exact = 'b'.repeat(500_000)
    const u = m.appendMessage(user(big))
    const a = m.appendMessage(assistant(exact))
    await m.flush()
    const disk = new Map(env.readJsonl(m.getSessionFile()!).map((r) => [r.id, r]))
    const stored = (disk.get(u)!.message as { content: string }).content
    expect(stored).toHaveLength(500_000)
    expect(stored.endsWith(NOTICE)).toBe(true)
    expect(stored).toBe('a'.repeat(500_000 - NOTICE.length) + NOTICE)
    expect((disk.get(a)!.message as { content: Array<{ text: string }> }).content[0]!.text).toBe(exact)
    // In memory nothing changed, also after a full rewrite and an incremental append.
    await m.rewriteEntries()
    const later = m.appendMessage(user(big))
    await m.flush()
    expect(textOf(m.getEntry(u))).toBe(big)
    expect(textOf(m.getEntry(later))).toBe(big)
    expect(m.buildSessionContext().messages[0]!.content).toBe(big)
    expect((env.readJsonl(m.getSessionFile()!).at(-1)!.message as { content: string }).content).toHaveLength(500_000)
    await m.close()
    expect(textOf((await open(m.getSessionFile()!)).getEntry(u))).toBe(stored)
  })
})
