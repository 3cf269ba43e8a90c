/**
 * `session-store migrate --from <store> --to <store> [--merge]`: the command around the store
 * move (the move itself: store-move.test.ts). DATA_DIR to DATA_DIR end to end, the refusal of
 * a non-empty destination, `--merge`, and a DATA_DIR moved into a database and back.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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
  writeFileSync(join(from, 'tenants', 'acme', 'sessions', '--a--', 'a.jsonl'), '{"type":"session"}\n')
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
    const size = formatBytes(readFileSync(join(FIXTURES, SESSION)).length + '{"type":"session"}\n'.length)
    expect(res.stdout).toBe(`moved 2 session files (${size}) and 1 blob (10 B) in 2 tenants from ${from} to ${to}; verified: every file and blob matches\n`)
    // A line per phase at its end; at most one a second before that.
    const lines = res.stderr.split('\n')
    for (const end of [`copying session files: 2/2, ${size}`, 'copying blobs: 1/1, 10 B', `verifying: 3/3, ${formatBytes(readFileSync(join(FIXTURES, SESSION)).length + 29)}`]) {
      expect(lines).toContain(end)
    }
    expect(lines.every((l) => l === '' || /^(copying session files|copying blobs|verifying): \d\/\d, /.test(l))).toBe(true)
    expect(readFileSync(join(to, 'sessions', '--w--', SESSION)).equals(readFileSync(join(FIXTURES, SESSION)))).toBe(true)
    expect(readFileSync(join(to, 'tenants', 'acme', 'blobs', blobHash), 'utf8')).toBe('blob bytes')
    expect(existsSync(join(from, '.lock'))).toBe(false)
    expect(existsSync(join(to, '.lock'))).toBe(false)
  })

  it('refuses a non-empty destination (exit 1), and --merge then finds everything already there', async () => {
    expect((await run(['migrate', '--from', 'from', '--to', 'to'])).code).toBe(0)
    const again = await run(['migrate', '--from', 'from', '--to', 'to'])
    expect(again.code).toBe(1)
    expect(again.stderr).toBe(`session-store: ${to} is not empty (2 files, 1 blob); pass --merge to add to it (a file that differs is never overwritten)\n`)
    const merged = await run(['migrate', '--from', 'from', '--to', 'to', '--merge'])
    expect(merged.code).toBe(0)
    expect(merged.stdout).toMatch(/^moved 2 session files .* in 2 tenants, 3 already there from /)
  })

  it('exits 1 and names each file that differs when --merge meets a different file', async () => {
    mkdirSync(join(to, 'sessions', '--w--'), { recursive: true })
    writeFileSync(join(to, 'sessions', '--w--', SESSION), 'mine\n')
    const res = await run(['migrate', '--from', 'from', '--to', 'to', '--merge'])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain(`session-store: default: sessions/--w--/${SESSION}: the destination holds a different file at this path (left unchanged)\n`)
    expect(res.stdout).toMatch(/verification FAILED: 2 problem\(s\)\n$/)
    expect(readFileSync(join(to, 'sessions', '--w--', SESSION), 'utf8')).toBe('mine\n')
  })

  it('moves a DATA_DIR into a database and back byte for byte, and refuses while a server holds the database', async () => {
    const db = await createTestDatabase()
    try {
      const there = await run(['migrate', '--from', 'from', '--to', db.url])
      expect(there.stderr.split('\n')).toContain('copying blobs: 1/1, 10 B')
      expect(there.stdout).toMatch(/^moved 2 session files \(.+\) and 1 blob \(10 B\) in 2 tenants from .+; verified: every file and blob matches\n$/)
      expect(there.code).toBe(0)
      const back = await run(['migrate', '--from', db.url, '--to', 'back'])
      expect(back.code).toBe(0)
      for (const file of [join('sessions', '--w--', SESSION), join('tenants', 'acme', 'sessions', '--a--', 'a.jsonl'), join('tenants', 'acme', 'blobs', blobHash)]) {
        expect(readFileSync(join(root, 'back', file)).equals(readFileSync(join(from, file)))).toBe(true)
      }
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
