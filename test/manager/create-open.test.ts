import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { hasCode } from '../../src/errors.js'
import { loadEntriesFromFile } from '../../src/session/session-loader.js'
import { SessionManager } from '../../src/session/session-manager.js'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import { assistant, makeSessionEnv, user, type SessionEnv } from '../helpers/session-env.js'

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let env: SessionEnv
beforeEach(() => { env = makeSessionEnv() })
afterEach(() => env.cleanup())

const open = async (path: string) => await SessionManager.open(path, undefined, env.storage, env.options)
const sessionPath = (name: string, dir = '--work-pi--') => {
  mkdirSync(join(env.dataDir, 'sessions', dir), { recursive: true })
  return join(env.dataDir, 'sessions', dir, name)
}
const jsonl = (...records: unknown[]) => records.map((r) => JSON.stringify(r) + '\n').join('')
const header = (extra: Record<string, unknown> = {}) => ({ type: 'session', version: 3, id: 'existing-session-id', timestamp: '2026-03-14T15:04:07.123Z', cwd: '/work/pi', ...extra })
const msg = (id: string, parentId: string | null, role = 'user') =>
  ({ type: 'message', id, parentId, timestamp: '2026-03-14T15:04:08.000Z', message: { role, content: id } })

describe('create (SPEC.md §6.2)', () => {
  it('§12.2 create("/work/pi") is D/sessions/--work-pi--/<fileTs>_<id>.jsonl with fileTs from the header timestamp', async () => {
    const m = await SessionManager.create('/work/pi', undefined, env.storage, env.options)
    const h = m.getHeader()
    const fileTs = h.timestamp.replace(/[:.]/g, '-')
    expect(m.getSessionFile()).toBe(join(env.dataDir, 'sessions', '--work-pi--', `${fileTs}_${h.id}.jsonl`))
  })

  it('§12.3 create writes no session file; leaf null, lookups undefined, lists empty', async () => {
    const m = await SessionManager.create('/work/pi', undefined, env.storage, env.options)
    expect(existsSync(m.getSessionFile()!)).toBe(false)
    expect(m.getLeafId()).toBeNull()
    expect(m.getLeafEntry()).toBeUndefined()
    expect(m.getEntry('x')).toBeUndefined()
    expect(m.getEntries()).toEqual([])
    expect(m.getBranch()).toEqual([])
    expect(m.getTree()).toEqual([])
    expect(env.files().filter((f) => f.endsWith('.jsonl'))).toEqual([])
  })

  it('§12.4 session ids of create, newSession, fork, forkFrom and createBranchedSession are UUIDv7', async () => {
    const m = await SessionManager.create('/work/pi', undefined, env.storage, env.options)
    const ids = [m.getSessionId()]
    const first = m.appendMessage(user())
    m.appendMessage(assistant())
    await m.flush()
    const source = m.getSessionFile()!
    await m.fork()
    ids.push(m.getSessionId())
    await m.createBranchedSession(first)
    ids.push(m.getSessionId())
    await m.newSession()
    ids.push(m.getSessionId())
    const copy = await SessionManager.forkFrom(source, '/work/other', undefined, env.storage, env.options)
    ids.push(copy.getSessionId())
    for (const id of ids) expect(id).toMatch(UUIDV7)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('§12.6 header and entry timestamps are ISO 8601 UTC with milliseconds', async () => {
    const m = await SessionManager.create('/work/pi', undefined, env.storage, env.options)
    m.appendMessage(user())
    m.appendThinkingLevelChange('high')
    expect(m.getHeader().timestamp).toMatch(ISO)
    for (const e of m.getEntries()) expect(e.timestamp).toMatch(ISO)
  })

  it('§12.7 bad cwds and terminal ids fail with INVALID_ARGUMENT; terminal id pts-3 is accepted', async () => {
    const bad = ['', 'a\nb', '/' + 'x'.repeat(260)]
    for (const cwd of bad) {
      await expect(SessionManager.create(cwd, undefined, env.storage, env.options)).rejects.toMatchObject({ code: 'SS_INVALID_ARGUMENT' })
    }
    await expect(SessionManager.create('/work/pi', undefined, env.storage, { ...env.options, terminalId: '../x' }))
      .rejects.toMatchObject({ code: 'SS_INVALID_ARGUMENT' })
    const ok = await SessionManager.create('/work/pi', undefined, env.storage, { ...env.options, terminalId: 'pts-3' })
    expect(readFileSync(join(env.dataDir, 'terminal-sessions', 'pts-3'), 'utf8')).toBe(`/work/pi\n${ok.getSessionFile()!}\n`)
  })
})

describe('open and loading (SPEC.md §5)', () => {
  it('§12.8 open of a path outside D fails with PATH_OUTSIDE_DATA_DIR and creates nothing', async () => {
    const outside = join(dirname(env.dataDir), `outside-${basename(env.dataDir)}`, 'x.jsonl')
    for (const path of [outside, join(env.dataDir, '..', 'y.jsonl'), '../../etc/passwd']) {
      await expect(open(path)).rejects.toMatchObject({ code: 'SS_PATH_OUTSIDE_DATA_DIR' })
    }
    expect(existsSync(dirname(outside))).toBe(false)
    expect(env.files()).toEqual([])
  })

  it('§12.9 a v3 file with foreign ids opens unchanged and is not rewritten', async () => {
    const path = sessionPath('a.jsonl')
    const text = jsonl(header(), msg('1', null), msg('peer-race', '1', 'assistant'))
    writeFileSync(path, text)
    const mtime = statSync(path).mtimeMs
    const m = await open(path)
    expect(m.getSessionId()).toBe('existing-session-id')
    expect(m.getEntries().map((e) => e.id)).toEqual(['1', 'peer-race'])
    expect(readFileSync(path, 'utf8')).toBe(text)
    expect(statSync(path).mtimeMs).toBe(mtime)
  })

  it('§12.10 loadEntriesFromFile returns [] for missing, empty, headerless and garbage files', async () => {
    const storage = new FileSessionStorage()
    expect(await loadEntriesFromFile(storage, sessionPath('missing.jsonl'))).toEqual([])
    const cases = { 'empty.jsonl': '', 'noheader.jsonl': jsonl(msg('1', null)), 'garbage.jsonl': 'not json\n\u0000\u0001{{{\n' }
    for (const [name, text] of Object.entries(cases)) {
      writeFileSync(sessionPath(name), text)
      expect(await loadEntriesFromFile(storage, sessionPath(name))).toEqual([])
    }
  })

  it('§12.13 a file cut inside its last line loads every earlier entry, directly and through open', async () => {
    const path = sessionPath('torn.jsonl')
    const full = jsonl(header(), msg('1', null), msg('2', '1', 'assistant'), msg('3', '2'))
    writeFileSync(path, full.slice(0, full.length - 20))
    expect((await loadEntriesFromFile(env.storage, path)).map((r) => r.id)).toEqual(['existing-session-id', '1', '2'])
    const m = await open(path)
    expect(m.getEntries().map((e) => e.id)).toEqual(['1', '2'])
    expect(m.getLeafId()).toBe('2')
  })

  it('an append after a torn last line starts a new line, so it survives the next load', async () => {
    const path = sessionPath('torn-append.jsonl')
    const full = jsonl(header(), msg('1', null), msg('2', '1', 'assistant'), msg('3', '2'))
    writeFileSync(path, full.slice(0, full.length - 20))
    const m = await open(path)
    const added = m.appendMessage(user('after the crash'))
    await m.flush()
    expect(readFileSync(path, 'utf8').startsWith(full.slice(0, full.length - 20) + '\n')).toBe(true)
    expect((await open(path)).getEntries().map((e) => e.id)).toEqual(['1', '2', added])
  })

  it('a torn v1 file is rewritten whole by its migration, with no stray blank line after it', async () => {
    const path = sessionPath('torn-v1.jsonl')
    const v1 = jsonl({ type: 'session', id: 'old', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/w' },
      { type: 'message', timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'assistant', content: 'a' } })
    writeFileSync(path, v1 + '{"type":"mess')
    const m = await open(path)
    m.appendMessage(user())
    await m.flush()
    expect(readFileSync(path, 'utf8').includes('\n\n')).toBe(false)
    expect(env.readJsonl(path)).toHaveLength(3)
  })

  it('§12.15 open of a missing, empty or whitespace-only path creates a header-only v3 file at exactly that path', async () => {
    const texts: Array<string | undefined> = [undefined, '', ' \t\r\n\n']
    for (const [i, text] of texts.entries()) {
      const path = sessionPath(`fresh-${i}.jsonl`)
      if (text !== undefined) writeFileSync(path, text)
      const m = await open(path)
      const records = env.readJsonl(path)
      expect(records).toHaveLength(1)
      expect(records[0]).toMatchObject({ type: 'session', version: 3, cwd: expect.any(String) })
      expect(records[0]!.id).toMatch(UUIDV7)
      expect(m.getSessionFile()).toBe(path)
      expect(m.getSessionId()).toBe(records[0]!.id)
    }
  })

  it('§12.16 a garbage first line is set aside as <name>.corrupt-<fileTs>, a fresh file written, a warning logged', async () => {
    const path = sessionPath('bad.jsonl')
    const garbage = 'this is not a header\n' + jsonl(msg('1', null))
    writeFileSync(path, garbage)
    await open(path)
    const dir = readdirSync(dirname(path))
    const corrupt = dir.find((f) => f.startsWith('bad.jsonl.corrupt-'))!
    expect(corrupt).toMatch(/^bad\.jsonl\.corrupt-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/)
    expect(readFileSync(join(dirname(path), corrupt), 'utf8')).toBe(garbage)
    expect(env.readJsonl(path)).toHaveLength(1)
    expect(env.logs.some((l) => l.level === 'warn' && l.obj.path === path && l.obj.movedTo === join(dirname(path), corrupt))).toBe(true)
  })

  it('§12.17 version 4 fails TOO_NEW, "3" and 2.5 fail INVALID; bytes and mtime unchanged', async () => {
    const cases: Array<[unknown, string]> = [[4, 'SS_SESSION_VERSION_TOO_NEW'], ['3', 'SS_SESSION_VERSION_INVALID'], [2.5, 'SS_SESSION_VERSION_INVALID']]
    for (const [version, code] of cases) {
      const path = sessionPath(`v-${String(version)}.jsonl`)
      writeFileSync(path, jsonl(header({ version }), msg('1', null)))
      const before = readFileSync(path)
      const mtime = statSync(path).mtimeMs
      const err = await open(path).catch((e: unknown) => e)
      expect(hasCode(err, code)).toBe(true)
      expect((err as Error).message).toContain(path)
      expect(readFileSync(path)).toEqual(before)
      expect(statSync(path).mtimeMs).toBe(mtime)
    }
  })

  it('§12.18 after open the leaf is the last entry line even on a side branch', async () => {
    const path = sessionPath('side.jsonl')
    writeFileSync(path, jsonl(header(), msg('1', null), msg('2', '1', 'assistant'), msg('3', '2'), msg('side', '1')))
    const m = await open(path)
    expect(m.getLeafId()).toBe('side')
    expect(m.getBranch().map((e) => e.id)).toEqual(['1', 'side'])
  })

  it('§12.19 an id-less record is opaque but survives rewriteEntries; duplicate ids: later wins, both listed', async () => {
    const path = sessionPath('odd.jsonl')
    const opaque = { type: 'message', note: 'no id' }
    writeFileSync(path, jsonl(header(), msg('dup', null), opaque, { ...msg('dup', null, 'assistant'), marker: 'later' }))
    const m = await open(path)
    expect(m.getEntries()).toHaveLength(2)
    expect(m.getEntry('dup')!.marker).toBe('later')
    expect(m.getEntries().some((e) => (e as Record<string, unknown>).note !== undefined)).toBe(false)
    await m.rewriteEntries()
    expect(env.readJsonl(path)[2]).toEqual(opaque)
  })
})
