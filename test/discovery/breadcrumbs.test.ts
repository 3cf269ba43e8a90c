/**
 * SPEC.md §2.4 and §11.3: terminal breadcrumbs and the resolution part of acceptance scenario 92
 * (`continueRecent` steps 1–2; step 3, creating a session, is the manager's).
 */
import fs from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  breadcrumbPath, readBreadcrumb, resolveContinueTarget, writeBreadcrumb,
} from '../../src/session/breadcrumbs.js'
import { hasCode } from '../../src/errors.js'
import { FileSessionStorage } from '../../src/storage/file-session-storage.js'
import { header, msg, override, recordingLog, setMtime, tempDataDir, writeSession } from './helpers.js'

const T0 = Date.UTC(2026, 2, 14, 12, 0, 0)
const CWD = '/work/pi'

let data: { dir: string, cleanup: () => void }
let storage: FileSessionStorage
let dir: string
let older: string
let newer: string

beforeEach(() => {
  data = tempDataDir()
  storage = new FileSessionStorage()
  dir = join(data.dir, 'sessions', '--work-pi--')
  older = writeSession(storage, join(dir, 'older.jsonl'), [header(), msg('1', 'user', 'old')])
  newer = writeSession(storage, join(dir, 'newer.jsonl'), [header(), msg('1', 'user', 'new')])
  setMtime(older, T0)
  setMtime(newer, T0 + 60_000)
})
afterEach(() => data.cleanup())

const crumbFile = (id: string): string => join(data.dir, 'terminal-sessions', id)
const resolveFor = async (terminalId?: string, cwd = CWD): Promise<string | null> =>
  await resolveContinueTarget(storage, { dataDir: data.dir, cwd, terminalId, sessionDir: dir })

describe('writeBreadcrumb / readBreadcrumb (§2.4)', () => {
  it('writes "<cwd>\\n<sessionFile>\\n" via temp file + rename, leaving no temp file', async () => {
    const log = recordingLog()
    await writeBreadcrumb(storage, data.dir, 'pts-3', CWD, older, log)
    expect(fs.readFileSync(crumbFile('pts-3'), 'utf8')).toBe(`${CWD}\n${older}\n`)
    expect(fs.readdirSync(join(data.dir, 'terminal-sessions'))).toEqual(['pts-3'])
    expect(await readBreadcrumb(storage, data.dir, 'pts-3')).toEqual({ cwd: CWD, sessionFile: older })
    expect(log.warnings).toEqual([])
  })

  it('replaces an earlier breadcrumb of the same terminal', async () => {
    const log = recordingLog()
    await writeBreadcrumb(storage, data.dir, 'pts-3', CWD, older, log)
    await writeBreadcrumb(storage, data.dir, 'pts-3', '/other', newer, log)
    expect(fs.readFileSync(crumbFile('pts-3'), 'utf8')).toBe(`/other\n${newer}\n`)
  })

  it('is best-effort: a failing rename is logged, swallowed, and the temp file removed', async () => {
    const log = recordingLog()
    const failing = override(storage, {
      rename: async () => { throw Object.assign(new Error('EIO: rename failed'), { code: 'EIO' }) },
    })
    await expect(writeBreadcrumb(failing, data.dir, 'pts-3', CWD, older, log)).resolves.toBeUndefined()
    expect(log.warnings).toHaveLength(1)
    expect(log.warnings[0]?.obj).toMatchObject({ terminalId: 'pts-3', err: { code: 'EIO' } })
    expect(fs.existsSync(crumbFile('pts-3'))).toBe(false)
    expect(fs.readdirSync(join(data.dir, 'terminal-sessions'))).toEqual([])
  })

  it('rejects invalid terminal ids with INVALID_ARGUMENT and writes nothing', async () => {
    const log = recordingLog()
    for (const bad of ['../x', '.', '..', '', 'a/b', 'x'.repeat(129), 'tab\there']) {
      const err = await writeBreadcrumb(storage, data.dir, bad, CWD, older, log).catch((e: unknown) => e)
      expect(hasCode(err, 'SS_INVALID_ARGUMENT')).toBe(true)
      expect(() => breadcrumbPath(data.dir, bad)).toThrow(expect.objectContaining({ code: 'SS_INVALID_ARGUMENT' }))
    }
    expect(fs.existsSync(join(data.dir, 'terminal-sessions'))).toBe(false)
    expect(fs.existsSync(join(data.dir, 'x'))).toBe(false)
    expect(breadcrumbPath(data.dir, 'pts-3')).toBe(crumbFile('pts-3'))
    expect(breadcrumbPath(data.dir, '.hidden_1')).toBe(crumbFile('.hidden_1'))
  })

  it('readBreadcrumb: null when missing or shorter than two lines; lines kept verbatim', async () => {
    expect(await readBreadcrumb(storage, data.dir, 'none')).toBeNull()
    storage.writeTextSync(crumbFile('one'), `${CWD}\n`)
    expect(await readBreadcrumb(storage, data.dir, 'one')).toBeNull()
    storage.writeTextSync(crumbFile('two'), `${CWD}\n${older}`)
    expect(await readBreadcrumb(storage, data.dir, 'two')).toEqual({ cwd: CWD, sessionFile: older })
    storage.writeTextSync(crumbFile('crlf'), `${CWD}\r\n${older}\r\n`)
    expect(await readBreadcrumb(storage, data.dir, 'crlf')).toEqual({ cwd: `${CWD}\r`, sessionFile: `${older}\r` })
  })
})

describe('resolveContinueTarget (§11.3, scenario 92)', () => {
  it('§12.92 a valid breadcrumb wins over a newer session', async () => {
    await writeBreadcrumb(storage, data.dir, 'pts-3', CWD, older, recordingLog())
    expect(await resolveFor('pts-3')).toBe(older)
    // Without the terminal id the newest session wins.
    expect(await resolveFor()).toBe(newer)
  })

  it('§12.92 a breadcrumb with a different cwd is ignored and the newest session wins', async () => {
    await writeBreadcrumb(storage, data.dir, 'pts-3', '/work/pi/', older, recordingLog())
    expect(await resolveFor('pts-3')).toBe(newer)
  })

  it('§12.92 a breadcrumb naming a deleted file is ignored and the newest session wins', async () => {
    await writeBreadcrumb(storage, data.dir, 'pts-3', CWD, older, recordingLog())
    fs.unlinkSync(older)
    expect(await resolveFor('pts-3')).toBe(newer)
  })

  it('§12.92 with no breadcrumb and no session the result is null (the caller creates one)', async () => {
    fs.rmSync(dir, { recursive: true })
    expect(await resolveFor('pts-3')).toBeNull()
    expect(await resolveFor()).toBeNull()
  })

  it('ignores breadcrumbs that are short, point outside DATA_DIR/sessions, or name a directory', async () => {
    const outside = join(data.dir, 'elsewhere.jsonl')
    writeSession(storage, outside, [header(), msg('1', 'user', 'x')])
    const sibling = join(`${data.dir}/sessions-evil`, 'x.jsonl') // shares the prefix, not the directory
    writeSession(storage, sibling, [header(), msg('1', 'user', 'x')])
    fs.mkdirSync(join(dir, 'adir.jsonl'))
    const cases: Record<string, string> = {
      short: `${CWD}\n`,
      outside: `${CWD}\n${outside}\n`,
      sibling: `${CWD}\n${sibling}\n`,
      escape: `${CWD}\n${dir}/../../elsewhere.jsonl\n`,
      root: `${CWD}\n${join(data.dir, 'sessions')}\n`,
      directory: `${CWD}\n${join(dir, 'adir.jsonl')}\n`,
      empty: `${CWD}\n\n`,
    }
    for (const [id, text] of Object.entries(cases)) {
      storage.writeTextSync(crumbFile(id), text)
      expect(await resolveFor(id), id).toBe(newer)
    }
  })

  it('accepts a breadcrumb path written with ".." segments that stays inside, returned resolved', async () => {
    storage.writeTextSync(crumbFile('dots'), `${CWD}\n${dir}/../--work-pi--/older.jsonl\n`)
    expect(await resolveFor('dots')).toBe(older)
  })

  it('defaults sessionDir to DATA_DIR/sessions/<encodeCwd(cwd)>', async () => {
    expect(await resolveContinueTarget(storage, { dataDir: data.dir, cwd: CWD })).toBe(newer)
    expect(await resolveContinueTarget(storage, { dataDir: data.dir, cwd: '/elsewhere' })).toBeNull()
  })

  it('rejects an invalid terminal id with INVALID_ARGUMENT', async () => {
    const err = await resolveFor('../x').catch((e: unknown) => e)
    expect(hasCode(err, 'SS_INVALID_ARGUMENT')).toBe(true)
  })
})
