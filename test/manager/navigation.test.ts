/**
 * Navigation and reads of a SessionManager (SPEC.md §6.5, §6.6) and appends racing with the
 * first flush (§8.3). Acceptance scenarios 30–33 and 40.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SessionManager } from '../../src/session/session-manager.js'
import { SessionModel } from '../../src/session/session-model.js'
import type { SessionEntryBase, SessionTreeNode } from '../../src/session/types.js'
import { ids, useManagerEnv } from '../helpers/manager-env.js'
import { assistant, user } from '../helpers/session-env.js'
import { storeStack } from '../helpers/stack.js'

const EMPTY_CONTEXT = { messages: [], thinkingLevel: 'off', models: {}, injectedTtsrRules: [], mode: 'none' }

const { env, spy, create, open } = useManagerEnv()
const diskIds = (path: string) => env.readJsonl(path).slice(1).map((r) => r.id)
const textOf = (entry: SessionEntryBase | undefined) => (entry?.message as { content?: unknown } | undefined)?.content
const tick = async () => { await new Promise((resolve) => setImmediate(resolve)) }

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

    const stack = storeStack({ dataDir: env.dataDir, storage: env.storage, blobs: env.options.blobs! })
    const message = { role: 'user', content: 'explicit', timestamp: 1 }
    await stack.registry.append(seed.getSessionId(), { type: 'message', message, parentId: p })
    await stack.registry.append(seed.getSessionId(), { type: 'message', message: { ...message, content: 'new root' }, parentId: null })
    const entries = (await stack.registry.entries(seed.getSessionId(), 0, 1000)).value.entries
    const leafId = (await stack.registry.get(seed.getSessionId())).leafId
    const viaRegistry = new SessionModel([seed.getHeader(), ...entries])
    viaRegistry.branch(leafId as string)
    await stack.close()

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
    await manual.close()
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
        scan: () => env.options.blobs!.scan(),
        remove: async (hashes, before) => await env.options.blobs!.remove(hashes, before),
        usage: async () => await env.options.blobs!.usage(),
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
