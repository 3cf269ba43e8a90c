/**
 * `RemoteSessionManager` against a real server: the same script of appends and navigation run
 * on it and on a local in-memory `SessionManager` gives the same entries, tree, labels, branches
 * and contexts (ids and timestamps aside); the factories and lifecycle operations behave as the
 * local ones do, with session ids where the local manager has file paths.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createClient, RemoteSessionManager, SessionStoreError, type AgentMessage, type SessionStoreClient } from '../../src/client/index.js'
import { SessionManager } from '../../src/session/session-manager.js'
import { assistant, listenTestServer, user, type TestServer } from './helpers.js'

let server: TestServer
let client: SessionStoreClient

beforeEach(async () => {
  server = await listenTestServer()
  client = createClient({ baseUrl: server.baseUrl })
})
afterEach(async () => {
  await client.close()
  await server.close()
})

type R<T> = T | Promise<T>
/** What the script needs: satisfied by both the local and the remote manager. */
interface Manager {
  appendMessage: (m: AgentMessage) => R<string>
  appendThinkingLevelChange: (level?: string | null) => R<string>
  appendModelChange: (model: string, role?: string) => R<string>
  appendCompaction: (s: string, short: string | undefined, kept: string | undefined, tokens: number, details?: unknown, ext?: boolean, preserve?: Record<string, unknown>) => R<string>
  appendCustomEntry: (customType: string, data?: unknown) => R<string>
  appendCustomMessageEntry: (customType: string, content: string | unknown[], display: boolean, details?: unknown, attribution?: 'user' | 'agent') => R<string>
  appendLabelChange: (targetId: string, label?: string) => R<string>
  appendTtsrInjection: (rules: string[]) => R<string>
  appendSessionInit: (init: { systemPrompt: string, task: string, tools: string[], outputSchema?: unknown }) => R<string>
  appendModeChange: (mode: string, data?: Record<string, unknown>) => R<string>
  branch: (id: string) => R<void>
  resetLeaf: () => R<void>
  branchWithSummary: (fromId: string | null, summary: string, details?: unknown, ext?: boolean) => R<string>
  getEntries: () => R<Array<{ id: string }>>
  getLeafId: () => R<string | null>
  getLeafEntry: () => R<unknown>
  getEntry: (id: string) => R<unknown>
  getTree: () => R<unknown>
  getBranch: (id?: string) => R<unknown[]>
  getChildren: (id: string) => R<unknown[]>
  getLabel: (id: string) => R<string | undefined>
  labels: () => R<ReadonlyMap<string, string>>
  buildSessionContext: (leafId?: string | null) => R<unknown>
}

/** Every append kind of SPEC.md §6.4 plus branch, branchWithSummary and resetLeaf. */
async function script (m: Manager): Promise<Record<string, string>> {
  const u1 = await m.appendMessage(user('u1'))
  const a1 = await m.appendMessage(assistant('a1'))
  await m.appendThinkingLevelChange('high')
  await m.appendModelChange('openai/gpt-4o', 'smol')
  await m.appendCustomEntry('todo', { open: 1 })
  await m.appendCustomMessageEntry('note', [{ type: 'text', text: 'n' }], true, { d: 1 })
  await m.appendLabelChange(u1, 'start')
  await m.appendLabelChange(a1, 'reply')
  await m.appendLabelChange(u1, '')
  await m.appendTtsrInjection(['r1', 'r2'])
  await m.appendSessionInit({ systemPrompt: 'sp', task: 't', tools: ['read'] })
  await m.appendModeChange('review', { strict: true })
  const c = await m.appendCompaction('summary', 'short', a1, 1234, { files: [] }, false, { x: 1 })
  await m.appendThinkingLevelChange()
  await m.appendMessage(user('after compaction'))
  await m.branch(a1)
  const side = await m.appendMessage(user('side'))
  await m.branchWithSummary(u1, 'tried', { d: 2 }, true)
  await m.appendMessage(user('after summary'))
  await m.resetLeaf()
  const root = await m.appendCustomEntry('new-root')
  await m.branch(c)
  return { u1, a1, c, side, root }
}

/** Replaces ids by their position and drops timestamps, so two sessions compare by content. */
function normalize (value: unknown, ids: Map<string, string>): unknown {
  if (typeof value === 'string') return ids.get(value) ?? value
  if (value instanceof Map) return normalize([...value.entries()], ids)
  if (Array.isArray(value)) return value.map((v) => normalize(v, ids))
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'timestamp').map(([k, v]) => [k, normalize(v, ids)]))
}

async function observe (m: Manager, at: Record<string, string>): Promise<unknown> {
  const entries = await m.getEntries()
  const ids = new Map(entries.map((e, i) => [e.id, `#${i}`]))
  const contexts = await Promise.all([undefined, null, 'unknown-id', ...Object.values(at)].map((leaf) => m.buildSessionContext(leaf)))
  return normalize({
    entries,
    leafId: await m.getLeafId(),
    leafEntry: await m.getLeafEntry(),
    entry: await m.getEntry(at.side!),
    missing: await m.getEntry('nope'),
    tree: await m.getTree(),
    branch: await m.getBranch(),
    branchOfSide: await m.getBranch(at.side),
    branchOfMissing: await m.getBranch('nope'),
    children: await m.getChildren(at.a1!),
    labels: await m.labels(),
    labelOfA1: await m.getLabel(at.a1!),
    labelOfU1: await m.getLabel(at.u1!),
    contexts,
  }, ids)
}

describe('RemoteSessionManager', () => {
  it('gives the same entries, tree, labels, branches and contexts as the local manager', async () => {
    const local = SessionManager.inMemory('/work/m')
    const remote = await RemoteSessionManager.create(client, '/work/m')
    const expected = await observe(local, await script(local))
    const actual = await observe(remote, await script(remote))
    expect(actual).toEqual(expected)
    expect((expected as { entries: unknown[] }).entries).toHaveLength(19)
  })

  it('starts empty, like a new local session', async () => {
    const remote = await RemoteSessionManager.create(client, '/work/m', { title: 'T' })
    expect(await remote.getLeafId()).toBeNull()
    expect(await remote.getLeafEntry()).toBeUndefined()
    expect(await remote.getEntries()).toEqual([])
    expect(await remote.getTree()).toEqual([])
    expect(await remote.getBranch()).toEqual([])
    expect(await remote.buildSessionContext()).toEqual(SessionManager.inMemory('/x').buildSessionContext())
    expect(await remote.getSessionName()).toBe('T')
    expect(await remote.getCwd()).toBe('/work/m')
    expect(await remote.getSessionId()).toBe(remote.sessionId)
    expect(await remote.entryCount()).toBe(0)
  })

  it('rejects unknown entries as the local manager does, by code', async () => {
    const remote = await RemoteSessionManager.create(client, '/work/m')
    await expect(remote.branch('nope')).rejects.toMatchObject({ status: 404, code: 'SS_ENTRY_NOT_FOUND' })
    await expect(remote.branchWithSummary('nope', 's')).rejects.toMatchObject({ code: 'SS_ENTRY_NOT_FOUND' })
    await expect(remote.appendLabelChange('nope', 'l')).rejects.toMatchObject({ status: 422 })
    await expect(remote.appendMessage({ role: 'branchSummary' })).rejects.toBeInstanceOf(SessionStoreError)
    expect(await remote.getEntries()).toEqual([])
  })

  it('appends a batch under an explicit parent', async () => {
    const remote = await RemoteSessionManager.create(client, '/work/m')
    const first = await remote.appendMessage(user())
    const result = await remote.appendEntries([{ type: 'custom', customType: 'a' }, { type: 'custom', customType: 'b' }], { parentId: null })
    expect(result.entries.map((e) => e.parentId)).toEqual([null, result.entries[0]!.id])
    expect((await remote.getChildren(first))).toEqual([])
  })

  it('opens an existing session, and rejects an unknown one with 404', async () => {
    const created = await RemoteSessionManager.create(client, '/work/m')
    await created.appendMessage(user())
    const opened = await RemoteSessionManager.open(client, created.sessionId)
    expect(await opened.getEntries()).toEqual(await created.getEntries())
    await expect(RemoteSessionManager.open(client, 'nope')).rejects.toMatchObject({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
  })

  it('continues the newest session of a cwd, or starts a new one', async () => {
    const fresh = await RemoteSessionManager.continueRecent(client, '/work/c')
    await fresh.appendMessage(user())
    await fresh.appendMessage(assistant())
    const again = await RemoteSessionManager.continueRecent(client, '/work/c', { terminalId: 'pts-9' })
    expect(again.sessionId).toBe(fresh.sessionId)
  })

  it('renames, moves, exports and deletes', async () => {
    const m = await RemoteSessionManager.create(client, '/work/old')
    await m.appendMessage(user())
    await m.appendMessage(assistant())
    await m.setSessionName('Named')
    await m.moveTo('/work/new')
    expect(await m.getSessionName()).toBe('Named')
    expect(await m.getCwd()).toBe('/work/new')
    const header = JSON.parse((await m.exportJsonl()).split('\n')[0]!) as Record<string, unknown>
    expect(header).toMatchObject({ id: m.sessionId, title: 'Named', cwd: '/work/new' })
    await m.delete()
    await expect(m.getSession()).rejects.toMatchObject({ status: 404 })
  })

  it('forks to a new id, keeping the old session, and works on the copy', async () => {
    const m = await RemoteSessionManager.create(client, '/work/f', { title: 'Orig' })
    await m.appendMessage(user())
    await m.appendMessage(assistant())
    const before = await m.getEntries()
    const { oldSessionId, newSessionId } = await m.fork()
    expect(newSessionId).not.toBe(oldSessionId)
    expect(m.sessionId).toBe(newSessionId)
    expect(await m.getHeader()).toMatchObject({ parentSession: oldSessionId, title: 'Orig' })
    expect(await m.getEntries()).toEqual(before)
    expect((await client.getSession(oldSessionId)).entryCount).toBe(2)
  })

  it('creates a branched session from the path to a leaf', async () => {
    const m = await RemoteSessionManager.create(client, '/work/b')
    const u = await m.appendMessage(user('1'))
    await m.appendMessage(assistant('2'))
    const oldId = m.sessionId
    const newId = await m.createBranchedSession(u)
    expect(newId).toBe(m.sessionId)
    expect(newId).not.toBe(oldId)
    expect((await m.getEntries()).map((e) => e.id)).toEqual([u])
  })

  it('starts a new session in the same cwd', async () => {
    const m = await RemoteSessionManager.create(client, '/work/n')
    await m.appendMessage(user())
    const oldId = m.sessionId
    const newId = await m.newSession({ parentSession: oldId })
    expect(m.sessionId).toBe(newId)
    expect(await m.getEntries()).toEqual([])
    expect(await m.getHeader()).toMatchObject({ cwd: '/work/n', parentSession: oldId })
  })

  it('imports a session file, keeping its id', async () => {
    const jsonl = [
      { type: 'session', version: 3, id: 'imported-1', timestamp: '2026-03-14T15:04:07.123Z', cwd: '/work/i' },
      { type: 'message', id: 'a', parentId: null, timestamp: '2026-03-14T15:04:08.000Z', message: user('x') },
    ].map((r) => JSON.stringify(r)).join('\n') + '\n'
    const m = await RemoteSessionManager.import(client, jsonl)
    expect(m.sessionId).toBe('imported-1')
    expect(await m.getLeafId()).toBe('a')
    const copy = await RemoteSessionManager.import(client, jsonl, { newId: true })
    expect(copy.sessionId).not.toBe('imported-1')
  })
})
