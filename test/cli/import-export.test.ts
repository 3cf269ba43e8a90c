/**
 * `import` and `export`, through a running server (`--server`) and directly on a DATA_DIR
 * (`--data-dir`, refused while a server holds the DATA_DIR lock).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from '../helpers/server-process.js'
import { cli, FIXTURES } from './helpers.js'

const V1 = join(FIXTURES, 'pi-v1-before-compaction.jsonl')
const V1_LARGE = join(FIXTURES, 'pi-v1-large-session.jsonl')
const V1_ID = 'ffae836b-9420-4060-ac13-7745215f90ff'
const V1_LARGE_ID = 'd703a1a9-1b7b-4fb1-b512-c9738b1fe617'

const dirs: string[] = []
function tempDir (): string {
  const dir = mkdtempSync(join(tmpdir(), 'ss-cli-io-'))
  dirs.push(dir)
  return dir
}
afterAll(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }) })

function records (text: string): Array<Record<string, any>> {
  return text.trim().split('\n').map((line) => JSON.parse(line))
}

/** Every session file below `dataDir/sessions`. */
function sessionFiles (dataDir: string): string[] {
  const root = join(dataDir, 'sessions')
  if (!existsSync(root)) return []
  return readdirSync(root).flatMap((dir) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.jsonl')).map((f) => join(root, dir, f)))
}

describe('against a running server (--server)', () => {
  let server: ServerProcess
  beforeAll(async () => { server = await startServer({ DATA_DIR: tempDir() }) })
  afterAll(async () => {
    server.child.kill('SIGTERM')
    await server.exited
  })

  it('imports v1 files as version 3 sessions under their own ids, then refuses them again unless --new-id', async () => {
    const first = await cli(['import', V1, V1_LARGE, '--server', server.baseUrl])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toBe(
      `imported ${V1} as ${V1_ID} (1002 entries)\n` +
      `imported ${V1_LARGE} as ${V1_LARGE_ID} (1018 entries)\n` +
      'imported 2 of 2 files\n')
    const res = await request(`${server.baseUrl}/v1/sessions/${V1_ID}`)
    expect((await res.body.json() as { header: { version: number } }).header.version).toBe(3)

    const again = await cli(['import', V1, '--server', server.baseUrl])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`session-store: ${V1}: Session '${V1_ID}' already exists`)
    expect(again.stderr).toContain('use --new-id')
    expect(again.stdout).toBe('imported 0 of 1 file, 1 failed\n')

    const copy = await cli(['import', V1, '--server', server.baseUrl, '--new-id'])
    expect(copy.code).toBe(0)
    const id = /as (\S+) \(1002 entries\)/.exec(copy.stdout)?.[1]
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(id).not.toBe(V1_ID)
  })

  it('exports the stored bytes to stdout and to --out', async () => {
    await cli(['import', V1_LARGE, '--server', server.baseUrl])
    const served = await (await request(`${server.baseUrl}/v1/sessions/${V1_LARGE_ID}/export`)).body.text()
    const out = await cli(['export', V1_LARGE_ID, '--server', server.baseUrl])
    expect(out.code).toBe(0)
    expect(out.stdout).toBe(served)
    expect(records(out.stdout)[0]).toMatchObject({ type: 'session', id: V1_LARGE_ID, version: 3 })

    const file = join(tempDir(), 'out.jsonl')
    const toFile = await cli(['export', V1_LARGE_ID, '--server', server.baseUrl, '--out', file])
    expect(toFile.code).toBe(0)
    expect(toFile.stdout).toBe('')
    expect(toFile.stderr).toBe(`exported ${V1_LARGE_ID} to ${file} (${Buffer.byteLength(served)} bytes)\n`)
    expect(readFileSync(file, 'utf8')).toBe(served)
  })

  it('reports an unknown id and an unreachable server as failures (exit 1)', async () => {
    const missing = await cli(['export', 'no-such-session', '--server', server.baseUrl])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe("session-store: Session 'no-such-session' not found (HTTP 404 SS_SESSION_NOT_FOUND)\n")
    const down = await cli(['export', 'x', '--server', 'http://127.0.0.1:1'])
    expect(down.code).toBe(1)
    expect(down.stderr).toMatch(/^session-store: cannot reach http:\/\/127\.0\.0\.1:1: /)
  })

  it('imports the good files of a batch and exits 1 for the bad one', async () => {
    const bad = join(tempDir(), 'not-a-session.jsonl')
    writeFileSync(bad, '{"hello":"world"}\n')
    const res = await cli(['import', bad, V1, '--server', server.baseUrl, '--new-id'])
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(new RegExp(`^session-store: ${bad}: .*header`))
    expect(res.stdout).toMatch(new RegExp(`^imported ${V1} as \\S+ \\(1002 entries\\)\nimported 1 of 2 files, 1 failed\n$`))
  })
})

describe('directly on a DATA_DIR (--data-dir)', () => {
  it('imports like the server: own id, migrated to version 3, taken ids refused unless --new-id; lock released', async () => {
    const dataDir = tempDir()
    const res = await cli(['import', V1, V1_LARGE, '--data-dir', dataDir])
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    // Not a terminal: one plain line per file and a summary, no progress line.
    expect(res.stdout).toBe(
      `imported ${V1} as ${V1_ID} (1002 entries)\n` +
      `imported ${V1_LARGE} as ${V1_LARGE_ID} (1018 entries)\n` +
      'imported 2 of 2 files\n')
    const files = sessionFiles(dataDir)
    expect(files.map((f) => f.split('/').slice(-2).join('/')).sort()).toEqual([
      `--Users-badlogic-workspaces-pi-mono--/2025-11-20T23-33-50-805Z_${V1_LARGE_ID}.jsonl`,
      `--Users-badlogic-workspaces-pi-mono--/2025-12-09T00-53-29-825Z_${V1_ID}.jsonl`,
    ])
    for (const file of files) {
      const [header, ...entries] = records(readFileSync(file, 'utf8'))
      expect(header).toMatchObject({ type: 'session', version: 3 })
      expect(entries.every((e) => typeof e.id === 'string')).toBe(true)
    }
    expect(existsSync(join(dataDir, '.lock'))).toBe(false)

    const again = await cli(['import', V1, '--data-dir', dataDir])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`Session '${V1_ID}' already exists (use --new-id to import a copy)`)
    const copy = await cli(['import', V1, '--data-dir', dataDir, '--new-id'])
    expect(copy.code).toBe(0)
    expect(sessionFiles(dataDir)).toHaveLength(3)
    const copied = sessionFiles(dataDir).find((f) => !files.includes(f)) as string
    expect(records(readFileSync(copied, 'utf8'))[0]).toMatchObject({ parentSession: V1_ID, version: 3 })
  })

  it('exports the stored bytes exactly, to stdout or --out, and fails for an unknown id', async () => {
    const dataDir = tempDir()
    expect((await cli(['import', V1, '--data-dir', dataDir])).code).toBe(0)
    const [file] = sessionFiles(dataDir)
    const stored = readFileSync(file as string)
    const out = await cli(['export', V1_ID, '--data-dir', dataDir])
    expect(out.code).toBe(0)
    // Buffer#equals: toEqual walks 2 MB byte by byte.
    expect(Buffer.from(out.stdout).equals(stored)).toBe(true)
    const target = join(tempDir(), 'copy.jsonl')
    expect((await cli(['export', V1_ID, '--data-dir', dataDir, '--out', target])).code).toBe(0)
    expect(readFileSync(target).equals(stored)).toBe(true)
    const missing = await cli(['export', 'nope', '--data-dir', dataDir])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe("session-store: Session 'nope' not found\n")
    expect(existsSync(join(dataDir, '.lock'))).toBe(false)
  })

  it('export does not create a DATA_DIR that does not exist', async () => {
    const dataDir = join(tempDir(), 'missing')
    const res = await cli(['export', V1_ID, '--data-dir', dataDir])
    expect(res.code).toBe(1)
    expect(res.stderr).toBe(`session-store: DATA_DIR ${dataDir} is not a directory\n`)
    expect(existsSync(dataDir)).toBe(false)
  })

  describe('while a server holds the DATA_DIR lock', () => {
    let server: ServerProcess
    let dataDir: string
    afterEach(async () => {
      server.child.kill('SIGTERM')
      await server.exited
    })

    it('import and export refuse (exit 1) and change nothing', async () => {
      dataDir = tempDir()
      server = await startServer({ DATA_DIR: dataDir })
      const imported = await cli(['import', V1, '--data-dir', dataDir])
      expect(imported.code).toBe(1)
      expect(imported.stderr).toContain(`session-store: DATA_DIR ${dataDir} is in use by process ${server.child.pid}`)
      expect(imported.stderr).toContain('--server <url>')
      expect(sessionFiles(dataDir)).toEqual([])
      const res = await request(`${server.baseUrl}/v1/sessions/${V1_ID}`)
      await res.body.dump()
      expect(res.statusCode).toBe(404)

      const exported = await cli(['export', V1_ID, '--data-dir', dataDir])
      expect(exported.code).toBe(1)
      expect(exported.stderr).toContain(`is in use by process ${server.child.pid}`)
      expect(readFileSync(join(dataDir, '.lock'), 'utf8').trim()).toBe(String(server.child.pid))
    })
  })
})
