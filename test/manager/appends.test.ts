/**
 * Appends, navigation and reads of a SessionManager (SPEC.md §6.4–§6.6), size control as the
 * manager applies it (§9.1, §9.2) and appends racing with the first flush (§8.3).
 * Acceptance scenarios 29–33, 35–40 and 71.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { RegistryCore } from '../../src/registry/registry-core.js'
import { append as registryAppend } from '../../src/registry/entry-operations.js'
import { SessionManager } from '../../src/session/session-manager.js'
import type { SessionEntryBase, SessionTreeNode } from '../../src/session/types.js'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import { assistant, makeSessionEnv, user, type SessionEnv } from '../helpers/session-env.js'
import { spyStorage, type SpyStorage } from '../helpers/spy-storage.js'

const NOTICE = '\n\n[Session persistence truncated large content]'
const EMPTY_CONTEXT = { messages: [], thinkingLevel: 'off', models: {}, injectedTtsrRules: [], mode: 'none' }

let env: SessionEnv
let spy: SpyStorage
beforeEach(() => {
  spy = spyStorage(new FileSessionStorage())
  env = makeSessionEnv(spy.storage)
})
afterEach(() => env.cleanup())

const create = async () => await SessionManager.create('/work/pi', undefined, env.storage, env.options)
const open = async (path: string) => await SessionManager.open(path, undefined, env.storage, env.options)
const ids = (entries: readonly SessionEntryBase[]) => entries.map((e) => e.id)
const diskIds = (path: string) => env.readJsonl(path).slice(1).map((r) => r.id)
const textOf = (entry: SessionEntryBase | undefined) => (entry?.message as { content?: unknown } | undefined)?.content
const tick = async () => { await new Promise((resolve) => setImmediate(resolve)) }

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

describe('navigation (SPEC.md §6.5)', () => {
  it('§12.30 branch(id) moves only the leaf; the next append is a sibling; after resetLeaf() the context is empty and the next append is a root', async () => {
    const m = await create()
    const e1 = m.appendMessage(user('1'))
    const e2 = m.appendMessage(assistant('2'))
    const e3 = m.appendMessage(user('3'))
    await m.flush()
    const entries = m.getEntries()
    const lines = env.readJsonl(m.getSessionFile()!).length
    m.branch(e1)
    expect(m.getLeafId()).toBe(e1)
    expect(m.getEntries()).toEqual(entries)
    expect(m.getEntry(e2)!.parentId).toBe(e1)
    await m.flush()
    expect(env.readJsonl(m.getSessionFile()!)).toHaveLength(lines)
    const sibling = m.appendMessage(user('4'))
    expect(m.getEntry(sibling)!.parentId).toBe(e1)
    expect(ids(m.getChildren(e1))).toEqual([e2, sibling])
    expect(ids(m.getBranch())).toEqual([e1, sibling])
    expect(ids(m.getBranch(e3))).toEqual([e1, e2, e3])

    m.resetLeaf()
    expect(m.getLeafId()).toBeNull()
    expect(m.getLeafEntry()).toBeUndefined()
    expect(m.getBranch()).toEqual([])
    expect(m.buildSessionContext()).toEqual(EMPTY_CONTEXT)
    const root = m.appendMessage(user('new root'))
    expect(m.getEntry(root)!.parentId).toBeNull()
    expect(m.getTree().map((n) => n.entry.id)).toEqual([e1, root])
    await m.flush()
    expect(env.readJsonl(m.getSessionFile()!).find((r) => r.id === root)!.parentId).toBeNull()
  })

  it('§12.31 branchWithSummary(id, "s") appends a branch_summary under id that becomes the leaf; null gives parentId null, fromId "root"', async () => {
    const m = await create()
    const e1 = m.appendMessage(user('1'))
    m.appendMessage(assistant('2'))
    const b = m.branchWithSummary(e1, 's', { files: 1 }, true)
    expect(m.getEntry(b)).toMatchObject({ type: 'branch_summary', parentId: e1, fromId: e1, summary: 's', details: { files: 1 }, fromExtension: true })
    expect(m.getLeafId()).toBe(b)
    const r = m.branchWithSummary(null, 'from scratch')
    const root = m.getEntry(r)!
    expect(root).toMatchObject({ type: 'branch_summary', parentId: null, fromId: 'root', summary: 'from scratch' })
    expect(Object.hasOwn(root, 'details')).toBe(false)
    expect(m.getLeafId()).toBe(r)
    expect(m.buildSessionContext().messages).toEqual([
      { role: 'branchSummary', summary: 'from scratch', fromId: 'root', timestamp: Date.parse(root.timestamp) },
    ])
    await m.flush()
    const disk = new Map(env.readJsonl(m.getSessionFile()!).map((rec) => [rec.id, rec]))
    expect(disk.get(b)).toMatchObject({ parentId: e1, fromId: e1 })
    expect(disk.get(r)).toMatchObject({ parentId: null, fromId: 'root' })
  })

  it('§12.32 branch("nope") and branchWithSummary("nope", "s") throw Entry nope not found and append nothing', async () => {
    const m = await create()
    m.appendMessage(user())
    const leaf = m.appendMessage(assistant())
    await m.flush()
    const before = m.getEntries()
    const lines = env.readJsonl(m.getSessionFile()!).length
    expect(() => m.branch('nope')).toThrow('Entry nope not found')
    expect(() => m.branch('nope')).toThrow(expect.objectContaining({ code: 'SS_ENTRY_NOT_FOUND' }))
    expect(() => m.branchWithSummary('nope', 's')).toThrow('Entry nope not found')
    expect(() => m.branchWithSummary('nope', 's')).toThrow(expect.objectContaining({ code: 'SS_ENTRY_NOT_FOUND' }))
    expect(m.getEntries()).toEqual(before)
    expect(m.getLeafId()).toBe(leaf)
    await m.flush()
    expect(env.readJsonl(m.getSessionFile()!)).toHaveLength(lines)
  })

  it('§12.33 getBranch(id) is root→id, getBranch("nope") is [], getChildren(id) lists direct children in file order', async () => {
    // Timestamps make file order differ from time order: getChildren must keep file order.
    const dir = join(env.dataDir, 'sessions', '--work-pi--')
    mkdirSync(dir, { recursive: true })
    const path = join(dir, 'nav.jsonl')
    const rec = (id: string, parentId: string | null, ts: string, role = 'user') =>
      JSON.stringify({ type: 'message', id, parentId, timestamp: `2026-03-14T15:04:${ts}.000Z`, message: { role, content: id } })
    writeFileSync(path, [
      JSON.stringify({ type: 'session', version: 3, id: 'nav', timestamp: '2026-03-14T15:04:00.000Z', cwd: '/work/pi' }),
      rec('1', null, '01'), rec('2', '1', '09', 'assistant'), rec('3', '2', '10'), rec('4', '1', '05'), rec('5', '4', '06'),
      rec('6', '1', '02'),
    ].join('\n') + '\n')
    const m = await open(path)
    expect(ids(m.getBranch('3'))).toEqual(['1', '2', '3'])
    expect(ids(m.getBranch('5'))).toEqual(['1', '4', '5'])
    expect(ids(m.getBranch('1'))).toEqual(['1'])
    expect(m.getBranch('nope')).toEqual([])
    expect(ids(m.getBranch())).toEqual(['1', '6'])
    expect(ids(m.getChildren('1'))).toEqual(['2', '4', '6'])
    expect(ids(m.getChildren('4'))).toEqual(['5'])
    expect(m.getChildren('3')).toEqual([])
    expect(m.getChildren('nope')).toEqual([])
    // The tree, unlike getChildren, orders children by timestamp (§6.6).
    expect(m.getTree()[0]!.children.map((n) => n.entry.id)).toEqual(['6', '4', '2'])
  })

  it('§12.40 an append with explicit parent P gives the same tree as branch(P) followed by the append', async () => {
    // Two byte-identical copies of one session: the registry's explicit-parent append on one,
    // branch(P) + append on the other. New entry ids are random, so trees compare by shape.
    const seed = await create()
    const p = seed.appendMessage(user('P'))
    seed.appendMessage(assistant('after P'))
    seed.appendMessage(user('leaf'))
    await seed.close()
    // Outside DATA_DIR/sessions, so that the registry's scan indexes only the original.
    const copy = join(env.dataDir, 'manual', 'copy.jsonl')
    mkdirSync(join(env.dataDir, 'manual'))
    copyFileSync(seed.getSessionFile()!, copy)

    const core = new RegistryCore({ dataDir: env.dataDir, storage: env.storage, blobs: env.options.blobs! })
    await core.ready
    const message = { role: 'user', content: 'explicit', timestamp: 1 }
    await registryAppend(core, seed.getSessionId(), { type: 'message', message, parentId: p }, {})
    await registryAppend(core, seed.getSessionId(), { type: 'message', message: { ...message, content: 'new root' }, parentId: null }, {})
    const viaRegistry = await core.use(seed.getSessionId(), (slot) => slot.manager)

    const manual = await open(copy)
    manual.branch(p)
    manual.appendMessage({ ...message })
    manual.resetLeaf()
    manual.appendMessage({ ...message, content: 'new root' })

    const shape = (nodes: SessionTreeNode[]): unknown[] => nodes.map((n) => ({
      content: textOf(n.entry), type: n.entry.type, children: shape(n.children),
    }))
    expect(shape(viaRegistry.getTree())).toEqual(shape(manual.getTree()))
    expect(textOf(viaRegistry.getLeafEntry())).toBe('new root')
    const explicit = viaRegistry.getEntries().find((e) => textOf(e) === 'explicit')!
    expect(explicit.parentId).toBe(p)
    expect(ids(viaRegistry.getChildren(p)).length).toBe(2)
    expect(viaRegistry.getEntries().find((e) => textOf(e) === 'new root')!.parentId).toBeNull()
    await viaRegistry.close()
    await manual.close()
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

describe('appends racing with the first flush (SPEC.md §8.3)', () => {
  it('appends issued while the first-flush write is in progress land on disk exactly once, in order', async () => {
    const m = await create()
    m.appendMessage(user('before'))
    const name = m.getSessionFile()!.split('/').pop()!
    let duringWrite: string[] = []
    let firstWrite = true
    spy.fail = (op, path) => {
      // Runs synchronously at the start of each session-file write: the first one is the
      // first flush, still in progress when these appends arrive.
      if (op === 'writeLine' && path.endsWith(name) && firstWrite) {
        firstWrite = false
        duringWrite = [m.appendMessage(user('during write 1')), m.appendCustomEntry('during write 2')]
      }
      return undefined
    }
    m.appendMessage(assistant('triggers the first flush'))
    const sameTick = m.appendMessage(user('same tick'))
    const pending: Array<Promise<void>> = []
    await Promise.resolve()
    const microtask = m.appendMessage(user('next microtask'))
    pending.push(m.flush())
    queueMicrotask(() => { m.appendMessage(user('queued microtask')) })
    await Promise.resolve()
    await tick()
    const afterTick = m.appendMessage(assistant('next tick'))
    pending.push(m.flush())
    await tick()
    m.appendModelChange('openai/gpt-4o')
    await Promise.all([...pending, m.flush()])
    expect(firstWrite).toBe(false)
    expect(duringWrite).toHaveLength(2)
    const onDisk = diskIds(m.getSessionFile()!)
    const inMemory = ids(m.getEntries())
    expect(inMemory).toHaveLength(9)
    expect(onDisk).toEqual(inMemory)
    expect(new Set(onDisk).size).toBe(onDisk.length)
    for (const id of [sameTick, microtask, afterTick, ...duringWrite]) expect(onDisk.filter((x) => x === id)).toHaveLength(1)
    const records = env.readJsonl(m.getSessionFile()!)
    expect(records.filter((r) => r.type === 'session')).toHaveLength(1)
    // Reopening gives the same session, and later appends still add exactly one line each.
    spy.fail = undefined
    await m.close()
    const reopened = await open(m.getSessionFile()!)
    expect(reopened.getEntries()).toEqual(m.getEntries())
  })

  it('appends racing with a slow first flush (a blob write inside it) land exactly once', async () => {
    const m = await SessionManager.create('/work/pi', undefined, env.storage, {
      ...env.options,
      blobs: {
        put: async (bytes) => { await tick(); await tick(); return await env.options.blobs!.put(bytes) },
        get: async (hash) => await env.options.blobs!.get(hash),
        has: async (hash) => await env.options.blobs!.has(hash),
      },
    })
    const image = { type: 'image', mimeType: 'image/png', data: Buffer.alloc(2048, 7).toString('base64') }
    m.appendMessage({ role: 'user', content: [image], timestamp: 1 })
    m.appendMessage(assistant())
    const flushes: Array<Promise<void>> = []
    for (let i = 0; i < 20; i++) {
      m.appendMessage(user(`u${i}`))
      if (i % 3 === 0) flushes.push(m.flush())
      if (i % 2 === 0) await tick()
      else await Promise.resolve()
    }
    await Promise.all([...flushes, m.flush()])
    const onDisk = diskIds(m.getSessionFile()!)
    expect(onDisk).toEqual(ids(m.getEntries()))
    expect(onDisk).toHaveLength(22)
    expect(new Set(onDisk).size).toBe(22)
  })
})
