/**
 * `session-store migrate <DATA_DIR>`: the dry run lists what it would rewrite and touches
 * nothing; `--apply` migrates through `SessionManager.open`; the DATA_DIR lock is honoured.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startServer } from '../helpers/server-process.js'
import { cli, FIXTURES } from './helpers.js'

const NAMES = ['pi-v1-before-compaction.jsonl', 'pi-v1-large-session.jsonl']

let dataDir: string
let sessionDir: string
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'ss-cli-migrate-'))
  sessionDir = join(dataDir, 'sessions', '--x--')
  mkdirSync(sessionDir, { recursive: true })
  for (const name of NAMES) copyFileSync(join(FIXTURES, name), join(sessionDir, name))
})
afterEach(() => rmSync(dataDir, { recursive: true, force: true }))

/** Names, bytes and mtimes of every file below DATA_DIR. */
/** Every file of the DATA_DIR but the running server's own index (which it writes as it pleases). */
function snapshot (): Map<string, { bytes: string, mtimeMs: number }> {
  const files = readdirSync(dataDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.parentPath.includes('.session-store'))
  return new Map(files.map((e) => {
    const path = join(e.parentPath, e.name)
    return [path, { bytes: readFileSync(path, 'base64'), mtimeMs: statSync(path).mtimeMs }]
  }))
}

function records (name: string): Array<Record<string, any>> {
  return readFileSync(join(sessionDir, name), 'utf8').trim().split('\n').map((line) => JSON.parse(line))
}

describe('session-store migrate', () => {
  it('dry run: lists the v1 files and why, reports counts, and changes no byte or mtime', async () => {
    const before = snapshot()
    const res = await cli(['migrate', dataDir])
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(res.stdout).toBe(
      'would migrate sessions/--x--/pi-v1-before-compaction.jsonl: version 1 (none in header) → 3; ' +
        '1002 records get entry ids and a parent chain; 2 firstKeptEntryIndexes → firstKeptEntryId\n' +
      'would migrate sessions/--x--/pi-v1-large-session.jsonl: version 1 (none in header) → 3; ' +
        '1018 records get entry ids and a parent chain\n' +
      'dry run: 2 of 2 session files would be migrated, 0 current, 0 unsupported, 0 skipped; nothing was changed (use --apply)\n')
    expect(snapshot()).toEqual(before)
    expect(existsSync(join(dataDir, '.lock'))).toBe(false)
  })

  it('--apply rewrites them as version 3 with ids and a parent chain; a second run finds nothing to do', async () => {
    const res = await cli(['migrate', dataDir, '--apply'])
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(/^migrated sessions\/--x--\/pi-v1-before-compaction\.jsonl: version 1 \(none in header\) → 3; /m)
    expect(res.stdout).toMatch(/^migrated sessions\/--x--\/pi-v1-large-session\.jsonl: version 1 /m)
    expect(res.stdout).toMatch(/\nmigrated 2 of 2 session files, 0 current, 0 unsupported, 0 skipped, 0 failed\n$/)
    for (const name of NAMES) {
      const [header, ...entries] = records(name)
      expect(header).toMatchObject({ type: 'session', version: 3 })
      entries.forEach((entry, i) => {
        expect(entry.id).toMatch(/^[0-9a-f]{8}$/)
        expect(entry.parentId).toBe(i === 0 ? null : entries[i - 1]!.id)
      })
    }
    const compactions = records(NAMES[0]!).filter((r) => r.type === 'compaction')
    expect(compactions).toHaveLength(2)
    for (const c of compactions) expect(c).not.toHaveProperty('firstKeptEntryIndex')

    const after = snapshot()
    const again = await cli(['migrate', dataDir])
    expect(again.code).toBe(0)
    expect(again.stdout).toBe('dry run: 0 of 2 session files would be migrated, 2 current, 0 unsupported, 0 skipped; nothing was changed (use --apply)\n')
    expect(snapshot()).toEqual(after)
  })

  it('names a v2 file\'s hookMessage roles and renames them on --apply', async () => {
    const lines = [
      { type: 'session', version: 2, id: 'v2-session', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/x' },
      { type: 'message', id: 'aaaaaaaa', parentId: null, timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'hookMessage', content: 'hi' } },
    ]
    writeFileSync(join(sessionDir, 'v2.jsonl'), lines.map((l) => JSON.stringify(l) + '\n').join('') + '{"torn":')
    const dry = await cli(['migrate', dataDir])
    expect(dry.stdout).toContain('would migrate sessions/--x--/v2.jsonl: version 2 → 3; 1 hookMessage role → custom; 1 unreadable line dropped\n')
    const applied = await cli(['migrate', dataDir, '--apply'])
    expect(applied.code).toBe(0)
    const [header, message] = records('v2.jsonl')
    expect(header).toMatchObject({ version: 3, id: 'v2-session' })
    expect(message).toMatchObject({ id: 'aaaaaaaa', message: { role: 'custom' } })
  })

  it('reports unsupported versions (exit 1) and skips files that are not sessions, leaving both alone', async () => {
    writeFileSync(join(sessionDir, 'future.jsonl'), '{"type":"session","version":4,"id":"f","cwd":"/x"}\n')
    writeFileSync(join(sessionDir, 'junk.jsonl'), 'not json\n')
    const before = snapshot()
    for (const args of [['migrate', dataDir], ['migrate', dataDir, '--apply']]) {
      const res = await cli(args)
      expect(res.code).toBe(1)
      expect(res.stderr).toMatch(/^session-store: Session file \S+future\.jsonl has version 4, newer than this server supports/)
      expect(res.stdout).toContain('skipped sessions/--x--/junk.jsonl: not a session file (no valid header)\n')
      expect(res.stdout).toMatch(/ 1 unsupported, 1 skipped/)
    }
    const after = snapshot()
    for (const name of ['future.jsonl', 'junk.jsonl']) {
      expect(after.get(join(sessionDir, name))).toEqual(before.get(join(sessionDir, name)))
    }
  })

  it('refuses while a server holds the DATA_DIR lock, touching nothing', async () => {
    const server = await startServer({ DATA_DIR: dataDir })
    try {
      const before = snapshot()
      const res = await cli(['migrate', dataDir, '--apply'])
      expect(res.code).toBe(1)
      expect(res.stderr).toContain(`session-store: DATA_DIR ${dataDir} is in use by process ${server.child.pid}`)
      expect(res.stdout).toBe('')
      expect(snapshot()).toEqual(before)
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  })

  it('fails for a DATA_DIR that does not exist, without creating it', async () => {
    const missing = join(dataDir, 'nope')
    const res = await cli(['migrate', missing])
    expect(res.code).toBe(1)
    expect(res.stderr).toBe(`session-store: DATA_DIR ${missing} is not a directory\n`)
    expect(existsSync(missing)).toBe(false)
  })
})
