/**
 * `session-store migrate --from <store> --to <store> [--merge]`: the command around the store
 * move (the move itself: store-move.test.ts). DATA_DIR to DATA_DIR end to end, the refusal of
 * a non-empty destination, `--merge`, and a DATA_DIR moved into a database and back.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FileBlobStore } from '../../src/blobs/index.js'
import { runCli } from '../../src/cli/run.js'
import { formatBytes } from '../../src/cli/store-move.js'
import { acquireInstanceLock } from '../../src/storage/postgres/instance-lock.js'
import { createTestDatabase } from '../helpers/pg.js'
import { cli, FIXTURES, memoryIo } from './helpers.js'

const SESSION = 'pi-v1-before-compaction.jsonl'
/** The header id of the fixture, and the other tenant's session file. */
const FIXTURE_ID = 'ffae836b-9420-4060-ac13-7745215f90ff'
const ACME = '{"type":"session","id":"a","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/a"}\n'

/** The bytes of the session file of `id` somewhere below `dir`'s `sessions/`. */
function sessionFile (dir: string, id: string): Buffer {
  const found = readdirSync(join(dir, 'sessions'), { recursive: true, withFileTypes: true }).find((e) => e.isFile() && e.name.endsWith(`${id}.jsonl`))
  if (found === undefined) throw new Error(`no file of session ${id} below ${dir}`)
  return readFileSync(join(found.parentPath, found.name))
}

let root: string
let from: string
let to: string
let blobHash: string
beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'ss-pgmove-cli-'))
  from = join(root, 'from')
  to = join(root, 'to')
  mkdirSync(join(from, 'sessions', '--w--'), { recursive: true })
  copyFileSync(join(FIXTURES, SESSION), join(from, 'sessions', '--w--', SESSION))
  mkdirSync(join(from, 'tenants', 'acme', 'sessions', '--a--'), { recursive: true })
  writeFileSync(join(from, 'tenants', 'acme', 'sessions', '--a--', 'a.jsonl'), ACME)
  writeFileSync(join(from, 'sessions', '--w--', 'x.jsonl.corrupt-2026'), 'set aside: stays behind\n')
  blobHash = (await new FileBlobStore(join(from, 'tenants', 'acme', 'blobs')).put(Buffer.from('blob bytes'))).hash
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

async function run (args: string[]): Promise<{ code: number | 'serving', stdout: string, stderr: string }> {
  const { io, stdout, stderr } = memoryIo({}, root)
  const code = await runCli(args, io)
  return { code, stdout: stdout(), stderr: stderr() }
}

describe('session-store migrate --from --to', () => {
  it('moves a DATA_DIR into another, prints progress on stderr and a verified summary, and releases both locks', async () => {
    const res = await cli(['migrate', '--from', from, '--to', to])
    expect(res.code).toBe(0)
    const size = formatBytes(readFileSync(join(FIXTURES, SESSION)).length + ACME.length)
    expect(res.stdout).toBe(`moved 2 sessions (${size}) and 1 blob (10 B) in 2 tenants from ${from} to ${to}; verified: every session and blob matches\n`)
    // A line per phase at its end; at most one a second before that.
    const lines = res.stderr.split('\n')
    for (const end of [`copying sessions: 2/2, ${size}`, 'copying blobs: 1/1, 10 B', `verifying: 3/3, ${formatBytes(readFileSync(join(FIXTURES, SESSION)).length + ACME.length + 10)}`]) {
      expect(lines).toContain(end)
    }
    expect(lines.every((l) => l === '' || /^(copying sessions|copying blobs|verifying): \d\/\d, /.test(l))).toBe(true)
    expect(sessionFile(to, FIXTURE_ID).equals(readFileSync(join(FIXTURES, SESSION)))).toBe(true)
    expect(readdirSync(join(to, 'sessions'), { recursive: true }).some((name) => String(name).includes('corrupt'))).toBe(false)
    expect(readFileSync(join(to, 'tenants', 'acme', 'blobs', blobHash), 'utf8')).toBe('blob bytes')
    expect(existsSync(join(from, '.lock'))).toBe(false)
    expect(existsSync(join(to, '.lock'))).toBe(false)
  })

  it('refuses a non-empty destination (exit 1), and --merge then finds everything already there', async () => {
    expect((await run(['migrate', '--from', 'from', '--to', 'to'])).code).toBe(0)
    const again = await run(['migrate', '--from', 'from', '--to', 'to'])
    expect(again.code).toBe(1)
    expect(again.stderr).toBe(`session-store: ${to} is not empty (2 sessions, 1 blob); pass --merge to add to it (a session that differs is never overwritten)\n`)
    const merged = await run(['migrate', '--from', 'from', '--to', 'to', '--merge'])
    expect(merged.code).toBe(0)
    expect(merged.stdout).toMatch(/^moved 2 sessions .* in 2 tenants, 3 already there from /)
  })

  it('exits 1 and names each session that differs when --merge meets a different one', async () => {
    mkdirSync(join(to, 'sessions', '--mine--'), { recursive: true })
    const mine = `{"type":"session","id":"${FIXTURE_ID}","cwd":"/mine"}\n`
    writeFileSync(join(to, 'sessions', '--mine--', `x_${FIXTURE_ID}.jsonl`), mine)
    const res = await run(['migrate', '--from', 'from', '--to', 'to', '--merge'])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain(`session-store: default: session ${FIXTURE_ID}: the destination holds a different session of this id (left unchanged)\n`)
    expect(res.stdout).toMatch(/verification FAILED: 2 problem\(s\)\n$/)
    expect(sessionFile(to, FIXTURE_ID).toString('utf8')).toBe(mine)
  })

  it('moves a DATA_DIR into a database and back byte for byte, and refuses while a server holds the database', async () => {
    const db = await createTestDatabase()
    try {
      const there = await run(['migrate', '--from', 'from', '--to', db.url])
      expect(there.stderr.split('\n')).toContain('copying blobs: 1/1, 10 B')
      expect(there.stdout).toMatch(/^moved 2 sessions \(.+\) and 1 blob \(10 B\) in 2 tenants from .+; verified: every session and blob matches\n$/)
      expect(there.code).toBe(0)
      const back = await run(['migrate', '--from', db.url, '--to', 'back'])
      expect(back.code).toBe(0)
      expect(sessionFile(join(root, 'back'), FIXTURE_ID).equals(readFileSync(join(FIXTURES, SESSION)))).toBe(true)
      expect(sessionFile(join(root, 'back', 'tenants', 'acme'), 'a').toString('utf8')).toBe(ACME)
      expect(readFileSync(join(root, 'back', 'tenants', 'acme', 'blobs', blobHash), 'utf8')).toBe('blob bytes')
      const server = await acquireInstanceLock(db.url, 'server')
      try {
        const refused = await run(['migrate', '--from', 'from', '--to', db.url, '--merge'])
        expect(refused.code).toBe(1)
        expect(refused.stderr).toContain('another session-store server is using this database')
      } finally {
        await server.release()
      }
    } finally {
      await db.drop()
    }
  })

  it('a missing source DATA_DIR is an error, and nothing is created', async () => {
    const res = await run(['migrate', '--from', 'nowhere', '--to', 'to'])
    expect(res.code).toBe(1)
    expect(res.stderr).toBe(`session-store: DATA_DIR ${join(root, 'nowhere')} is not a directory\n`)
    expect(existsSync(to)).toBe(false)
  })
})
