/**
 * createBranchedSession on real files (SPEC.md §6.3). Acceptance scenarios 41–44.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SessionManager } from '../../src/session/session-manager.js'
import { ids, useManagerEnv } from '../helpers/manager-env.js'
import { assistant, user } from '../helpers/session-env.js'

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const HEX8 = /^[0-9a-f]{8}$/
const REF = /^blob:sha256:[0-9a-f]{64}$/

const { env, create } = useManagerEnv()
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l !== '')
const jsonlFiles = () => env.files().filter((f) => f.endsWith('.jsonl'))
const tmpFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.tmp'))
const bigImage = (seed = 1) => ({ type: 'image', mimeType: 'image/png', data: Buffer.alloc(1500, seed).toString('base64') })

/** `1→2→3` and `2→4→5`, with an assistant message so that the file exists. */
async function forked (): Promise<{ m: SessionManager, e: string[] }> {
  const m = await create()
  const e1 = m.appendMessage(user('1'))
  const e2 = m.appendMessage(assistant('2'))
  const e3 = m.appendMessage(user('3'))
  m.branch(e2)
  const e4 = m.appendMessage(user('4'))
  const e5 = m.appendMessage(assistant('5'))
  await m.flush()
  return { m, e: [e1, e2, e3, e4, e5] }
}

describe('createBranchedSession (SPEC.md §6.3)', () => {
  it('§12.41 createBranchedSession("nope") fails ENTRY_NOT_FOUND; on 1→2→3, 2→4→5 createBranchedSession(5) leaves [1, 2, 4, 5]', async () => {
    const { m, e: [e1, e2, , e4, e5] } = await forked()
    const file = m.getSessionFile()!
    const before = jsonlFiles()
    const err = await m.createBranchedSession('nope').catch((x: unknown) => x)
    expect(err).toMatchObject({ code: 'SS_ENTRY_NOT_FOUND', message: 'Entry nope not found' })
    expect(m.getSessionFile()).toBe(file)
    expect(m.getEntries()).toHaveLength(5)
    expect(jsonlFiles()).toEqual(before)

    const path = await m.createBranchedSession(e5!)
    expect(ids(m.getEntries())).toEqual([e1, e2, e4, e5])
    expect(m.getLeafId()).toBe(e5)
    expect(m.getEntry(e4!)!.parentId).toBe(e2)
    expect(path).toBe(m.getSessionFile())
    expect(env.readJsonl(path!).slice(1).map((r) => [r.id, r.parentId])).toEqual([[e1, null], [e2, e1], [e4, e2], [e5, e4]])
  })

  it('§12.42 in memory, createBranchedSession(2) on 1→2→3→4 with 3→5 leaves [1, 2] and returns undefined', async () => {
    const m = SessionManager.inMemory('/work/pi')
    const e1 = m.appendMessage(user('1'))
    const e2 = m.appendMessage(assistant('2'))
    const e3 = m.appendMessage(user('3'))
    m.appendMessage(assistant('4'))
    m.branch(e3)
    m.appendMessage(assistant('5'))
    const id = m.getSessionId()
    expect(await m.createBranchedSession(e2)).toBeUndefined()
    expect(ids(m.getEntries())).toEqual([e1, e2])
    expect(m.getLeafId()).toBe(e2)
    expect(m.getSessionId()).not.toBe(id)
    expect(m.getSessionFile()).toBeUndefined()
    expect(m.buildSessionContext().messages).toHaveLength(2)
    expect(env.files()).toEqual([])
  })

  it('§12.43 labels of kept entries are recreated as fresh label entries after the last kept entry; other labels are dropped', async () => {
    const m = await create()
    const e1 = m.appendMessage(user('1'))
    const e2 = m.appendMessage(assistant('2'))
    const e3 = m.appendMessage(user('3'))
    const l1 = m.appendLabelChange(e1, 'first')
    const l3 = m.appendLabelChange(e3, 'third')
    m.branch(e2)
    m.appendMessage(user('4'))
    const l2 = m.appendLabelChange(e2, 'second')
    const lx = m.appendLabelChange(e1, 'first again')
    await m.flush()

    await m.createBranchedSession(e2)
    const entries = m.getEntries()
    expect(entries).toHaveLength(4)
    expect(ids(entries.slice(0, 2))).toEqual([e1, e2])
    const [fresh1, fresh2] = entries.slice(2)
    // Label-map order: e1 became labelled before e2 (relabelling keeps its place).
    expect(fresh1).toMatchObject({ type: 'label', targetId: e1, label: 'first again', parentId: e2 })
    expect(fresh2).toMatchObject({ type: 'label', targetId: e2, label: 'second', parentId: fresh1!.id })
    for (const f of [fresh1!, fresh2!]) {
      expect(f.id).toMatch(HEX8)
      expect([e1, e2, e3, l1, l2, l3, lx]).not.toContain(f.id)
      expect(f.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    }
    expect(m.getLabel(e1)).toBe('first again')
    expect(m.getLabel(e2)).toBe('second')
    expect(m.getLabel(e3)).toBeUndefined()
    expect(m.getLeafId()).toBe(fresh2!.id)
    const disk = env.readJsonl(m.getSessionFile()!)
    expect(disk.slice(1).map((r) => r.id)).toEqual(ids(entries))
    expect(disk.filter((r) => r.type === 'label').map((r) => r.targetId)).toEqual([e1, e2])
  })

  it('§12.43 label entries on the kept path are dropped and recreated fresh', async () => {
    const m = SessionManager.inMemory('/work/pi')
    const e1 = m.appendMessage(user('1'))
    const e2 = m.appendMessage(assistant('2'))
    const old = m.appendLabelChange(e1, 'x')
    await m.createBranchedSession(old)
    const entries = m.getEntries()
    expect(entries.map((e) => e.type)).toEqual(['message', 'message', 'label'])
    expect(ids(entries.slice(0, 2))).toEqual([e1, e2])
    expect(entries[2]).toMatchObject({ targetId: e1, label: 'x', parentId: e2 })
    expect(entries[2]!.id).not.toBe(old)
    expect(m.getLabel(e1)).toBe('x')
  })

  it('§12.43 recreated labels follow the order in which targets last became labelled', async () => {
    const m = SessionManager.inMemory('/work/pi')
    const e1 = m.appendMessage(user('1'))
    const e2 = m.appendMessage(assistant('2'))
    m.appendLabelChange(e1, 'one')
    m.appendLabelChange(e2, 'two')
    m.appendLabelChange(e1)
    m.appendLabelChange(e1, 'one again')
    await m.createBranchedSession(e2)
    const labels = m.getEntries().slice(2)
    expect(labels.map((l) => [l.targetId, l.label])).toEqual([[e2, 'two'], [e1, 'one again']])
    expect(labels[0]!.parentId).toBe(e2)
    expect(labels[1]!.parentId).toBe(labels[0]!.id)
  })

  it('§12.44 a persisting createBranchedSession writes a new file at once (parentSession = old session id, never a file path; no title, image refs); the old file is unchanged', async () => {
    const m = await create()
    await m.setSessionName('Old title')
    const img = bigImage()
    const e1 = m.appendMessage({ role: 'user', content: [{ type: 'text', text: 'look' }, img], timestamp: 1 })
    const e2 = m.appendMessage(assistant('seen'))
    m.appendMessage(user('dropped'))
    await m.flush()
    const oldFile = m.getSessionFile()!
    const oldId = m.getSessionId()
    const oldBytes = readFileSync(oldFile)
    const oldMtime = statSync(oldFile).mtimeMs

    const path = await m.createBranchedSession(e2)
    expect(path).toMatch(/\.jsonl$/)
    expect(path).not.toBe(oldFile)
    expect(dirname(path!)).toBe(dirname(oldFile))
    expect(m.getSessionFile()).toBe(path)
    expect(m.isFlushed()).toBe(true)
    // Written at once: no flush() needed.
    const records = env.readJsonl(path!)
    expect(records[0]).toEqual({ type: 'session', version: 3, id: m.getSessionId(), timestamp: records[0]!.timestamp, cwd: '/work/pi', parentSession: oldId })
    expect(m.getSessionId()).toMatch(UUIDV7)
    expect(basename(path!)).toBe(`${String(records[0]!.timestamp).replace(/[:.]/g, '-')}_${m.getSessionId()}.jsonl`)
    expect(m.getSessionName()).toBeUndefined()
    expect(records.slice(1).map((r) => r.id)).toEqual([e1, e2])
    const storedImage = (records[1]!.message as { content: Array<Record<string, unknown>> }).content[1]!
    expect(storedImage.data).toMatch(REF)
    expect(storedImage.mimeType).toBe('image/png')
    expect(((m.getEntry(e1)!.message as { content: Array<Record<string, unknown>> }).content[1]!).data).toBe(img.data)
    expect(readFileSync(oldFile)).toEqual(oldBytes)
    expect(statSync(oldFile).mtimeMs).toBe(oldMtime)
    expect(tmpFiles(dirname(oldFile))).toEqual([])
    // Later appends go to the new file only.
    m.appendMessage(user('next'))
    await m.flush()
    expect(lines(path!)).toHaveLength(4)
    expect(readFileSync(oldFile)).toEqual(oldBytes)
  })
})
