/**
 * Lifecycle operations on real files (SPEC.md §6.2 forkFrom, §6.3, §6.7): fork, forkFrom,
 * newSession, setSessionName, moveTo, rewriteEntries and the service's create options.
 * Acceptance scenarios 45–53.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SessionManager } from '../../src/session/session-manager.js'
import { ids, useManagerEnv } from '../helpers/manager-env.js'
import { assistant, user } from '../helpers/session-env.js'

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const HEX8 = /^[0-9a-f]{8}$/

const { env, spy, create, open } = useManagerEnv()
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

describe('fork and forkFrom (SPEC.md §6.2, §6.3)', () => {
  it('§12.45 fork() writes a new file (new id, parentSession = old id, old title, same entry ids), leaves the old file unchanged and returns both paths; in memory it returns undefined', async () => {
    const { m, e } = await forked()
    await m.setSessionName('Keep me')
    m.branch(e[2]!)
    const oldFile = m.getSessionFile()!
    const oldId = m.getSessionId()
    const oldBytes = readFileSync(oldFile)
    const result = await m.fork()
    expect(result).toEqual({ oldSessionFile: oldFile, newSessionFile: m.getSessionFile() })
    const newFile = result!.newSessionFile
    expect(newFile).not.toBe(oldFile)
    expect(dirname(newFile)).toBe(dirname(oldFile))
    expect(m.getSessionId()).not.toBe(oldId)
    expect(m.getSessionId()).toMatch(UUIDV7)
    const records = env.readJsonl(newFile)
    expect(records[0]).toEqual({
      type: 'session', version: 3, id: m.getSessionId(), title: 'Keep me', timestamp: records[0]!.timestamp, cwd: '/work/pi', parentSession: oldId,
    })
    expect(records.slice(1).map((r) => [r.id, r.parentId])).toEqual(env.readJsonl(oldFile).slice(1).map((r) => [r.id, r.parentId]))
    expect(ids(m.getEntries())).toEqual(e)
    expect(m.getLeafId()).toBe(e[2])
    expect(readFileSync(oldFile)).toEqual(oldBytes)
    m.appendMessage(user('after fork'))
    await m.flush()
    expect(lines(newFile)).toHaveLength(7)
    expect(readFileSync(oldFile)).toEqual(oldBytes)

    const memory = SessionManager.inMemory('/work/pi')
    memory.appendMessage(user())
    const memoryId = memory.getSessionId()
    expect(await memory.fork()).toBeUndefined()
    expect(memory.getSessionId()).toBe(memoryId)
    expect(memory.getEntries()).toHaveLength(1)
  })

  it('§12.46 forkFrom of a session in another cwd writes a file in the target directory at once with every source entry; the source is unchanged', async () => {
    const { m: source, e } = await forked()
    await source.setSessionName('Source title')
    await source.close()
    const sourceFile = source.getSessionFile()!
    const sourceBytes = readFileSync(sourceFile)
    const copy = await SessionManager.forkFrom(sourceFile, '/work/other', undefined, env.storage, env.options)
    const path = copy.getSessionFile()!
    expect(dirname(path)).toBe(join(env.dataDir, 'sessions', '--work-other--'))
    expect(existsSync(path)).toBe(true)
    const records = env.readJsonl(path)
    expect(records[0]).toMatchObject({ type: 'session', version: 3, id: copy.getSessionId(), cwd: '/work/other', parentSession: source.getSessionId(), title: 'Source title' })
    expect(copy.getSessionId()).not.toBe(source.getSessionId())
    expect(records.slice(1).map((r) => [r.id, r.parentId])).toEqual(source.getEntries().map((x) => [x.id, x.parentId]))
    expect(ids(copy.getEntries())).toEqual(e)
    expect(copy.getLeafId()).toBe(e[4])
    expect(copy.getCwd()).toBe('/work/other')
    expect(readFileSync(sourceFile)).toEqual(sourceBytes)
  })

  it('§12.46 forkFrom writes at once even without an assistant message', async () => {
    const dir = join(env.dataDir, 'sessions', '--work-src--')
    mkdirSync(dir, { recursive: true })
    const sourceFile = join(dir, 'users-only.jsonl')
    const text = JSON.stringify({ type: 'session', version: 3, id: 'src', timestamp: '2026-03-14T15:04:07.123Z', cwd: '/work/src' }) + '\n' +
      JSON.stringify({ type: 'message', id: 'u1', parentId: null, timestamp: '2026-03-14T15:04:08.000Z', message: { role: 'user', content: 'hi' } }) + '\n'
    writeFileSync(sourceFile, text)
    const copy = await SessionManager.forkFrom(sourceFile, '/work/dst', undefined, env.storage, env.options)
    expect(env.readJsonl(copy.getSessionFile()!).map((r) => r.id)).toEqual([copy.getSessionId(), 'u1'])
    expect(readFileSync(sourceFile, 'utf8')).toBe(text)
  })

  it('§12.47 forkFrom of a v1 source writes a migrated v3 copy and leaves the source untouched; a missing source fails FORK_SOURCE_INVALID and creates no file', async () => {
    const dir = join(env.dataDir, 'sessions', '--work-legacy--')
    mkdirSync(dir, { recursive: true })
    const sourceFile = join(dir, 'v1.jsonl')
    const v1 = [
      { type: 'session', id: 'legacy', timestamp: '2025-11-20T23:33:50.805Z', cwd: '/work/legacy' },
      { type: 'message', timestamp: '2025-11-20T23:33:51.000Z', message: { role: 'user', content: 'a' } },
      { type: 'message', timestamp: '2025-11-20T23:33:52.000Z', message: { role: 'hookMessage', content: 'h' } },
      { type: 'message', timestamp: '2025-11-20T23:33:53.000Z', message: { role: 'assistant', content: 'b' } },
    ]
    const text = v1.map((r) => JSON.stringify(r) + '\n').join('')
    writeFileSync(sourceFile, text)
    const mtime = statSync(sourceFile).mtimeMs
    const copy = await SessionManager.forkFrom(sourceFile, '/work/pi', undefined, env.storage, env.options)
    const records = env.readJsonl(copy.getSessionFile()!)
    expect(records[0]).toMatchObject({ version: 3, parentSession: 'legacy', cwd: '/work/pi' })
    const entries = records.slice(1)
    expect(entries).toHaveLength(3)
    entries.forEach((r, i) => {
      expect(r.id).toMatch(HEX8)
      expect(r.parentId).toBe(i === 0 ? null : entries[i - 1]!.id)
    })
    expect((entries[1]!.message as { role: string }).role).toBe('custom')
    expect(ids(copy.getEntries())).toEqual(entries.map((r) => r.id))
    expect(readFileSync(sourceFile, 'utf8')).toBe(text)
    expect(statSync(sourceFile).mtimeMs).toBe(mtime)

    const before = env.files()
    const missing = join(dir, 'missing.jsonl')
    const err = await SessionManager.forkFrom(missing, '/work/new-place', undefined, env.storage, env.options).catch((x: unknown) => x)
    expect(err).toMatchObject({ code: 'SS_FORK_SOURCE_INVALID' })
    expect((err as Error).message).toContain(missing)
    expect((err as Error).message).toContain('missing')
    expect(env.files()).toEqual(before)
    expect(existsSync(join(env.dataDir, 'sessions', '--work-new-place--'))).toBe(false)
  })
})

describe('newSession and setSessionName (SPEC.md §6.3, §6.7)', () => {
  it('§12.48 newSession() clears entries and leaf, writes nothing and returns the new path; parentSession "x" goes into the header', async () => {
    const { m } = await forked()
    const oldFile = m.getSessionFile()!
    const oldBytes = readFileSync(oldFile)
    const files = env.files()
    spy.ops.length = 0
    const path = await m.newSession()
    expect(path).toBe(m.getSessionFile())
    expect(path).not.toBe(oldFile)
    expect(dirname(path!)).toBe(dirname(oldFile))
    expect(basename(path!)).toBe(`${m.getHeader().timestamp.replace(/[:.]/g, '-')}_${m.getSessionId()}.jsonl`)
    expect(m.getEntries()).toEqual([])
    expect(m.getLeafId()).toBeNull()
    expect(m.getTree()).toEqual([])
    expect(m.isFlushed()).toBe(false)
    expect(existsSync(path!)).toBe(false)
    expect(env.files()).toEqual(files)
    expect(spy.ops.filter((op) => !op.startsWith('close:') && !op.startsWith('fsync:'))).toEqual([])
    expect(readFileSync(oldFile)).toEqual(oldBytes)
    expect(Object.hasOwn(m.getHeader(), 'parentSession')).toBe(false)

    const child = await m.newSession({ parentSession: 'x' })
    expect(m.getHeader().parentSession).toBe('x')
    expect(existsSync(child!)).toBe(false)
    m.appendMessage(user())
    m.appendMessage(assistant())
    await m.flush()
    expect(env.readJsonl(child!)[0]).toMatchObject({ type: 'session', version: 3, id: m.getSessionId(), parentSession: 'x' })

    expect(await SessionManager.inMemory('/work/pi').newSession()).toBeUndefined()
  })

  it('§12.49 setSessionName("T") before the first assistant writes nothing and the first flush carries title "T"', async () => {
    const m = await create()
    m.appendMessage(user())
    spy.ops.length = 0
    await m.setSessionName('T')
    expect(m.getSessionName()).toBe('T')
    expect(existsSync(m.getSessionFile()!)).toBe(false)
    expect(spy.ops).toEqual([])
    m.appendMessage(assistant())
    await m.flush()
    expect(env.readJsonl(m.getSessionFile()!)[0]).toMatchObject({ type: 'session', title: 'T' })
  })

  it('§12.49 setSessionName on a flushed session rewrites the file atomically with identical entry lines', async () => {
    const m = await create()
    m.appendMessage({ role: 'user', content: [{ type: 'text', text: 'x'.repeat(10) }, bigImage(3)], timestamp: 5 })
    m.appendMessage(assistant('a'.repeat(600_000)))
    m.appendCustomEntry('c', { nested: { partialJson: 'dropped', keep: 1 } })
    await m.flush()
    const file = m.getSessionFile()!
    const before = lines(file)
    const inode = statSync(file).ino
    await m.setSessionName('Renamed')
    const after = lines(file)
    expect(JSON.parse(after[0]!)).toEqual({ ...JSON.parse(before[0]!), title: 'Renamed' })
    expect(after.slice(1)).toEqual(before.slice(1))
    // Replaced by a rename, not written in place.
    expect(statSync(file).ino).not.toBe(inode)
    expect(tmpFiles(dirname(file))).toEqual([])
    expect(spy.ops.some((op) => op.startsWith('rename:.') && op.endsWith(`->${basename(file)}`))).toBe(true)
    m.appendMessage(user('after'))
    await m.flush()
    expect(lines(file)).toHaveLength(before.length + 1)
  })
})

describe('moveTo (SPEC.md §6.3)', () => {
  it('§12.50 moveTo("/new/cwd") moves the file under the same name, updates the header cwd and removes the old path; moving to the current cwd writes nothing', async () => {
    const { m, e } = await forked()
    const oldFile = m.getSessionFile()!
    const oldLines = lines(oldFile)
    await m.moveTo('/new/cwd')
    const target = join(env.dataDir, 'sessions', '--new-cwd--', basename(oldFile))
    expect(m.getSessionFile()).toBe(target)
    expect(m.getCwd()).toBe('/new/cwd')
    expect(m.getSessionDir()).toBe(dirname(target))
    expect(m.getHeader().cwd).toBe('/new/cwd')
    expect(existsSync(oldFile)).toBe(false)
    const moved = lines(target)
    expect(JSON.parse(moved[0]!)).toEqual({ ...JSON.parse(oldLines[0]!), cwd: '/new/cwd' })
    expect(moved.slice(1)).toEqual(oldLines.slice(1))
    expect(ids(m.getEntries())).toEqual(e)
    expect(jsonlFiles()).toEqual([join('sessions', '--new-cwd--', basename(oldFile))])
    m.appendMessage(user('after move'))
    await m.flush()
    expect(lines(target)).toHaveLength(moved.length + 1)

    const bytes = readFileSync(target)
    const mtime = statSync(target).mtimeMs
    spy.ops.length = 0
    await m.moveTo('/new/cwd')
    expect(spy.ops).toEqual([])
    expect(readFileSync(target)).toEqual(bytes)
    expect(statSync(target).mtimeMs).toBe(mtime)
    expect(m.getSessionFile()).toBe(target)
  })

  it('§12.51 moveTo onto an existing destination fails MOVE_DESTINATION_EXISTS and changes nothing', async () => {
    const { m, e } = await forked()
    const file = m.getSessionFile()!
    const bytes = readFileSync(file)
    const destDir = join(env.dataDir, 'sessions', '--taken--')
    mkdirSync(destDir, { recursive: true })
    const dest = join(destDir, basename(file))
    writeFileSync(dest, 'someone else\n')
    const files = env.files()
    const err = await m.moveTo('/taken').catch((x: unknown) => x)
    expect(err).toMatchObject({ code: 'SS_MOVE_DESTINATION_EXISTS' })
    expect((err as Error).message).toContain(dest)
    expect(readFileSync(file)).toEqual(bytes)
    expect(readFileSync(dest, 'utf8')).toBe('someone else\n')
    expect(env.files()).toEqual(files)
    expect(m.getSessionFile()).toBe(file)
    expect(m.getCwd()).toBe('/work/pi')
    expect(m.getHeader().cwd).toBe('/work/pi')
    expect(m.getSessionDir()).toBe(dirname(file))
    expect(ids(m.getEntries())).toEqual(e)
    // Still bound to the old file.
    m.appendMessage(user('still here'))
    await m.flush()
    expect(lines(file)).toHaveLength(7)
  })

  it('§12.52 moveTo of a deferred session creates the file in the new directory', async () => {
    const m = await create()
    const u = m.appendMessage(user('only a user message'))
    const oldFile = m.getSessionFile()!
    await m.moveTo('/elsewhere')
    const target = join(env.dataDir, 'sessions', '--elsewhere--', basename(oldFile))
    expect(m.getSessionFile()).toBe(target)
    expect(existsSync(oldFile)).toBe(false)
    const records = env.readJsonl(target)
    expect(records[0]).toMatchObject({ type: 'session', id: m.getSessionId(), cwd: '/elsewhere' })
    expect(records.slice(1).map((r) => r.id)).toEqual([u])
    expect(jsonlFiles()).toEqual([join('sessions', '--elsewhere--', basename(oldFile))])
    // Flushed now: the next append adds one line.
    m.appendMessage(user('next'))
    await m.flush()
    expect(lines(target)).toHaveLength(3)
  })
})

describe('rewriteEntries (SPEC.md §6.7)', () => {
  it('§12.53 rewriteEntries() after an in-place edit of a tool result writes the edit; ids and order unchanged', async () => {
    const m = await create()
    m.appendMessage(user('read it'))
    m.appendMessage({ ...assistant('calling'), content: [{ type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'a.txt' } }] })
    const tr = m.appendMessage({ role: 'toolResult', toolCallId: 'call_1', toolName: 'read', content: [{ type: 'text', text: 'huge output' }], isError: false, timestamp: 3 })
    m.appendMessage(assistant('done'))
    await m.flush()
    const file = m.getSessionFile()!
    const before = env.readJsonl(file)
    const message = m.getEntry(tr)!.message as { content: Array<{ text: string }> }
    message.content[0]!.text = '[output pruned]'
    await m.rewriteEntries()
    const after = env.readJsonl(file)
    expect(after.map((r) => r.id)).toEqual(before.map((r) => r.id))
    expect(after.map((r) => r.parentId)).toEqual(before.map((r) => r.parentId))
    const stored = after.find((r) => r.id === tr)!
    expect((stored.message as { content: Array<{ text: string }> }).content[0]!.text).toBe('[output pruned]')
    expect(after.filter((r) => r.id !== tr)).toEqual(before.filter((r) => r.id !== tr))
    expect((await open(file)).getEntries()).toEqual(m.getEntries())
  })
})

describe('create options (the service side of §6.2)', () => {
  it('create with sessionId, parentSession and title stays deferred and writes them with the first flush', async () => {
    const m = await SessionManager.create('/work/pi', undefined, env.storage, { ...env.options, sessionId: 'my-id', parentSession: 'p', title: 'T' })
    expect(m.getSessionId()).toBe('my-id')
    expect(m.getSessionFile()!.endsWith('_my-id.jsonl')).toBe(true)
    m.appendMessage(user())
    await m.flush()
    expect(existsSync(m.getSessionFile()!)).toBe(false)
    m.appendMessage(assistant())
    await m.flush()
    expect(env.readJsonl(m.getSessionFile()!)[0]).toMatchObject({ id: 'my-id', parentSession: 'p', title: 'T', version: 3 })
  })
})
