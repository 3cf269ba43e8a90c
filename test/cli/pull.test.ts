/**
 * `session-store pull`: sessions written back where the agents look for them, as the stored
 * bytes (byte for byte the agent's file), their blobs in the agent's blob directory or, with
 * `--inline-images`, their data back in the lines; `--cwd` for a whole project.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cli } from './helpers.js'
import { agentDir, assistant, header, image, lines, listeningApp, titleLine, user, writeSession, type AgentDir } from './agent-dir.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c() })

/** A fresh, empty agent home for the CLI: `$HOME`, and its `.omp/agent/sessions`. */
function emptyHome (): { home: string, sessions: string, blobs: string } {
  const home = mkdtempSync(join(tmpdir(), 'ss-pull-home-'))
  cleanups.push(() => { rmSync(home, { recursive: true, force: true }) })
  return { home, sessions: join(home, '.omp', 'agent', 'sessions'), blobs: join(home, '.omp', 'agent', 'blobs') }
}

async function synced (dir: AgentDir, url: string): Promise<void> {
  const res = await cli(['sync', dir.sessions, '--server', url, '--once'])
  expect(res.code, res.stderr).toBe(0)
}

describe('pull', () => {
  it("writes oh-my-pi's file where it looks for it, byte for byte, with its blobs", async () => {
    const dir = agentDir()
    const server = await listeningApp()
    cleanups.push(dir.cleanup, server.stop)
    const target = emptyHome()
    const img = image(5)
    const withRef = user('a1', null, [{ type: 'text', text: 'see' }, { type: 'image', data: `blob:sha256:${img.hash}`, mimeType: 'image/png' }])
    const cwd = join(target.home, 'proj')
    const text = titleLine('Triage') + lines(header('omp-2', cwd), withRef, assistant('b2', 'a1'))
    // The image reaches the server through sync, from the first machine's blob directory.
    ;(await import('node:fs')).writeFileSync(join(dir.blobs, img.hash), Buffer.from(img.data, 'base64'))
    writeSession(dir, '-proj', 'omp-2', text)
    await synced(dir, server.url)

    const res = await cli(['pull', 'omp-2', '--server', server.url, '--into', target.sessions], { env: { HOME: target.home } })
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toBe('pulled omp-2 into -proj/2026-03-14T15-04-07-123Z_omp-2.jsonl\npulled 1 of 1 session\n')
    expect(readFileSync(join(target.sessions, '-proj', '2026-03-14T15-04-07-123Z_omp-2.jsonl'), 'utf8')).toBe(text)
    expect(readFileSync(join(target.blobs, img.hash)).equals(Buffer.from(img.data, 'base64'))).toBe(true)
  })

  it('gives pi its own file back with --inline-images, and pulls every session of a project with --cwd', async () => {
    const dir = agentDir()
    const server = await listeningApp()
    cleanups.push(dir.cleanup, server.stop)
    const img = image(6)
    const inline = user('a1', null, [{ type: 'text', text: 'see' }, { type: 'image', data: img.data, mimeType: 'image/png' }])
    const path = writeSession(dir, '--work-demo--', 'pi-2', lines(header('pi-2'), user('z0', null)))
    await synced(dir, server.url)
    // The image arrives as an appended line: the server stores it as a blob ref.
    ;(await import('node:fs')).appendFileSync(path, lines({ ...inline, parentId: 'z0' }, assistant('b2', 'a1')))
    await synced(dir, server.url)
    writeSession(dir, '--work-demo--', 'pi-3', lines(header('pi-3'), user('q1', null), assistant('q2', 'q1')))
    writeSession(dir, '--work-other--', 'pi-4', lines(header('pi-4', '/work/other'), user('r1', null)))
    await synced(dir, server.url)

    const target = emptyHome()
    const into = join(target.home, '.pi', 'agent', 'sessions')
    const res = await cli(['pull', '--cwd', '/work/demo', '--server', server.url, '--into', into, '--inline-images'], { env: { HOME: target.home } })
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toContain('pulled 2 of 2 sessions\n')
    expect(readFileSync(join(into, '--work-demo--', '2026-03-14T15-04-07-123Z_pi-2.jsonl'), 'utf8')).toBe(readFileSync(path, 'utf8'))
    expect(existsSync(join(into, '--work-demo--', '2026-03-14T15-04-07-123Z_pi-3.jsonl'))).toBe(true)
    expect(existsSync(join(into, '--work-other--'))).toBe(false)

    // Without --inline-images the refs stay and the blob goes to the blob directory.
    const refs = await cli(['pull', 'pi-2', '--server', server.url, '--into', into], { env: { HOME: target.home } })
    expect(refs.code).toBe(0)
    expect(readFileSync(join(into, '--work-demo--', '2026-03-14T15-04-07-123Z_pi-2.jsonl'), 'utf8')).toContain(`blob:sha256:${img.hash}`)
    expect(existsSync(join(target.home, '.pi', 'agent', 'blobs', img.hash))).toBe(true)
  }, 90_000)

  it('reports an unknown session and refuses ids together with --cwd', async () => {
    const server = await listeningApp()
    cleanups.push(server.stop)
    const target = emptyHome()
    const res = await cli(['pull', 'nope', '--server', server.url, '--into', target.sessions])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain("nope: Session 'nope' not found (HTTP 404 SS_SESSION_NOT_FOUND)")
    expect((await cli(['pull', 'x', '--cwd', '/w', '--server', server.url, '--into', target.sessions])).code).toBe(2)
    expect((await cli(['pull', 'x', '--server', server.url])).code).toBe(2)
  })
})
