/**
 * Terminal breadcrumbs and `continueRecent` end to end through SessionManager (SPEC.md §2.4,
 * §11.3). Acceptance scenarios 92 and 93.
 */
import { existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ManagerOptions } from '../../src/session/session-factories.js'
import { SessionManager } from '../../src/session/session-manager.js'
import { assistant, makeSessionEnv, user, type SessionEnv } from '../helpers/session-env.js'

const CWD = '/work/pi'

let env: SessionEnv
beforeEach(() => { env = makeSessionEnv() })
afterEach(() => env.cleanup())

const withTerminal = (terminalId?: string): ManagerOptions => terminalId === undefined ? env.options : { ...env.options, terminalId }
const crumbPath = (terminalId: string) => join(env.dataDir, 'terminal-sessions', terminalId)
const crumb = (terminalId: string) => readFileSync(crumbPath(terminalId), 'utf8')
const continueRecent = async (terminalId?: string, cwd = CWD) =>
  await SessionManager.continueRecent(cwd, undefined, env.storage, withTerminal(terminalId))
const setAge = (path: string, secondsAgo: number) => {
  const t = new Date(Date.now() - secondsAgo * 1000)
  utimesSync(path, t, t)
}

/** A flushed session of `cwd` with one user and one assistant message; returns the manager. */
async function session (text: string, terminalId?: string, cwd = CWD): Promise<SessionManager> {
  const m = await SessionManager.create(cwd, undefined, env.storage, withTerminal(terminalId))
  m.appendMessage(user(text))
  m.appendMessage(assistant(`re: ${text}`))
  await m.close()
  return m
}

describe('continueRecent (SPEC.md §11.3)', () => {
  it('§12.92 a valid breadcrumb wins even when another session is newer', async () => {
    const mine = await session('mine', 'pts-1')
    const other = await session('other')
    setAge(mine.getSessionFile()!, 3600)
    setAge(other.getSessionFile()!, 10)
    expect(crumb('pts-1')).toBe(`${CWD}\n${mine.getSessionFile()!}\n`)
    const resumed = await continueRecent('pts-1')
    expect(resumed.getSessionFile()).toBe(mine.getSessionFile())
    expect(resumed.getSessionId()).toBe(mine.getSessionId())
    expect(resumed.getEntries()).toEqual(mine.getEntries())
    expect(resumed.getLeafId()).toBe(mine.getLeafId())
    // Loading it rewrote the breadcrumb with the same content; another terminal gets the newest.
    expect(crumb('pts-1')).toBe(`${CWD}\n${mine.getSessionFile()!}\n`)
    expect((await continueRecent('pts-2')).getSessionFile()).toBe(other.getSessionFile())
    expect((await continueRecent()).getSessionFile()).toBe(other.getSessionFile())
  })

  it('§12.92 a breadcrumb with a different cwd is ignored and the newest session opens', async () => {
    const older = await session('older', 'pts-1')
    const newest = await session('newest')
    setAge(older.getSessionFile()!, 3600)
    setAge(newest.getSessionFile()!, 10)
    // Same file, but the breadcrumb names another cwd (compared verbatim, no resolution).
    for (const cwd of ['/work/other', '/work/pi/', '/work/./pi']) {
      writeFileSync(crumbPath('pts-1'), `${cwd}\n${older.getSessionFile()!}\n`)
      const resumed = await continueRecent('pts-1')
      expect(resumed.getSessionFile()).toBe(newest.getSessionFile())
      expect(resumed.getEntries()).toEqual(newest.getEntries())
    }
    // Written through a real manager of another cwd, too.
    await session('elsewhere', 'pts-1', '/work/other')
    expect(crumb('pts-1').startsWith('/work/other\n')).toBe(true)
    expect((await continueRecent('pts-1')).getSessionFile()).toBe(newest.getSessionFile())
  })

  it('§12.92 a breadcrumb naming a deleted file is ignored and the newest session opens', async () => {
    const gone = await session('gone', 'pts-1')
    const older = await session('older')
    const newest = await session('newest')
    setAge(older.getSessionFile()!, 7200)
    setAge(newest.getSessionFile()!, 60)
    setAge(gone.getSessionFile()!, 10)
    rmSync(gone.getSessionFile()!)
    expect(crumb('pts-1')).toBe(`${CWD}\n${gone.getSessionFile()!}\n`)
    const resumed = await continueRecent('pts-1')
    expect(resumed.getSessionFile()).toBe(newest.getSessionFile())
    expect(resumed.getEntries()).toEqual(newest.getEntries())
    // Not recreated: the deleted path stays deleted.
    expect(existsSync(gone.getSessionFile()!)).toBe(false)
    expect(crumb('pts-1')).toBe(`${CWD}\n${newest.getSessionFile()!}\n`)
  })

  it('§12.92 with no breadcrumb and no session it starts a new session without a file', async () => {
    const m = await continueRecent('pts-9')
    expect(m.getEntries()).toEqual([])
    expect(m.getLeafId()).toBeNull()
    expect(m.isFlushed()).toBe(false)
    expect(m.getCwd()).toBe(CWD)
    const path = m.getSessionFile()!
    expect(path.startsWith(join(env.dataDir, 'sessions', '--work-pi--') + '/')).toBe(true)
    expect(existsSync(path)).toBe(false)
    expect(env.files().filter((f) => f.endsWith('.jsonl'))).toEqual([])
    expect(crumb('pts-9')).toBe(`${CWD}\n${path}\n`)
    // Deferred like any created session: the first assistant message writes it.
    m.appendMessage(user())
    m.appendMessage(assistant())
    await m.flush()
    expect(env.readJsonl(path)).toHaveLength(3)

    const plain = await continueRecent(undefined, '/work/empty')
    expect(plain.getEntries()).toEqual([])
    expect(existsSync(plain.getSessionFile()!)).toBe(false)
  })

  it('§12.92 a session dropped before its first assistant reply is passed over', async () => {
    const previous = await session('previous')
    setAge(previous.getSessionFile()!, 600)
    const dropped = await SessionManager.create(CWD, undefined, env.storage, withTerminal('pts-1'))
    dropped.appendMessage(user('no reply yet'))
    await dropped.close()
    expect(existsSync(dropped.getSessionFile()!)).toBe(false)
    expect(crumb('pts-1')).toBe(`${CWD}\n${dropped.getSessionFile()!}\n`)
    const resumed = await continueRecent('pts-1')
    expect(resumed.getSessionFile()).toBe(previous.getSessionFile())
    expect(existsSync(dropped.getSessionFile()!)).toBe(false)
  })
})

describe('breadcrumbs (SPEC.md §2.4, §11.3)', () => {
  it('§12.93 breadcrumbs hold "<cwd>\\n<path>\\n" after create, newSession, open, moveTo and forkFrom', async () => {
    const t = 'pts-3'
    const m = await SessionManager.create(CWD, undefined, env.storage, withTerminal(t))
    expect(crumb(t)).toBe(`${CWD}\n${m.getSessionFile()!}\n`)
    m.appendMessage(user())
    m.appendMessage(assistant())
    await m.flush()
    const first = m.getSessionFile()!

    const next = await m.newSession()
    expect(next).not.toBe(first)
    expect(crumb(t)).toBe(`${CWD}\n${next!}\n`)

    const opened = await SessionManager.open(first, undefined, env.storage, withTerminal(t))
    expect(crumb(t)).toBe(`${CWD}\n${first}\n`)

    await opened.moveTo('/work/moved')
    const moved = opened.getSessionFile()!
    expect(moved).toBe(join(env.dataDir, 'sessions', '--work-moved--', first.split('/').pop()!))
    expect(crumb(t)).toBe(`/work/moved\n${moved}\n`)

    const copy = await SessionManager.forkFrom(moved, '/work/copy', undefined, env.storage, withTerminal(t))
    expect(crumb(t)).toBe(`/work/copy\n${copy.getSessionFile()!}\n`)

    // setSessionFile on an existing manager writes it as well.
    await opened.setSessionFile(moved)
    expect(crumb(t)).toBe(`/work/moved\n${moved}\n`)
  })

  it('§12.93 fork and createBranchedSession do not rewrite the breadcrumb', async () => {
    const t = 'pts-4'
    const m = await SessionManager.create(CWD, undefined, env.storage, withTerminal(t))
    const first = m.appendMessage(user())
    m.appendMessage(assistant())
    await m.flush()
    const original = m.getSessionFile()!
    const expected = `${CWD}\n${original}\n`
    expect(crumb(t)).toBe(expected)
    const stamp = statSync(crumbPath(t))

    const forked = await m.fork()
    expect(forked!.newSessionFile).not.toBe(original)
    expect(crumb(t)).toBe(expected)

    const branched = await m.createBranchedSession(first)
    expect(branched).not.toBe(forked!.newSessionFile)
    expect(crumb(t)).toBe(expected)
    const after = statSync(crumbPath(t))
    expect(after.ino).toBe(stamp.ino)
    expect(after.mtimeMs).toBe(stamp.mtimeMs)
  })

  it('in-memory managers never write a breadcrumb, and no terminal id means no breadcrumb', async () => {
    const m = SessionManager.inMemory(CWD, env.storage, withTerminal('pts-5'))
    m.appendMessage(user())
    m.appendMessage(assistant())
    await m.newSession()
    await m.moveTo('/work/else')
    expect(existsSync(join(env.dataDir, 'terminal-sessions'))).toBe(false)
    await session('plain')
    expect(existsSync(join(env.dataDir, 'terminal-sessions'))).toBe(false)
  })
})
