/**
 * DATA_DIR pointed at an agent's own directory: sessions the agent filed under a home-relative
 * directory (`-proj`) are listed, found recent and continued for their cwd, and a directory the
 * agent renames (it moves `--home-…-proj--` to `-proj` when it lists that cwd) does not make a
 * session vanish.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { sessionDirNames } from '../../src/session/agent-dirs.js'
import { agentHome, http, runReader, sampleImage, startDiskServer, type AgentHome, type DiskServer, type Json } from './support.js'

describe('compat: the agents\' own session directories', () => {
  let home: AgentHome
  let server: DiskServer | undefined
  const savedHome = process.env.HOME
  beforeEach(() => {
    home = agentHome()
    // The server's $HOME is the agent's, as when it runs on the agent's machine.
    process.env.HOME = home.home
  })
  afterEach(async () => {
    await server?.stop()
    process.env.HOME = savedHome
    home.cleanup()
  })

  it('names a cwd\'s directories as SPEC.md and as the agents do', () => {
    expect(sessionDirNames('/home/u/proj', '/home/u', '/tmp')).toEqual(['--home-u-proj--', '-proj'])
    expect(sessionDirNames('/home/u', '/home/u', '/tmp')).toEqual(['--home-u--', '-'])
    expect(sessionDirNames('/home/u/a/b:c', '/home/u/', '/tmp')).toEqual(['--home-u-a-b-c--', '-a-b-c'])
    expect(sessionDirNames('/tmp/x/y', '/home/u', '/tmp')).toEqual(['--tmp-x-y--', '-tmp-x-y'])
    expect(sessionDirNames('/srv/app', '/home/u', '/tmp')).toEqual(['--srv-app--'])
    expect(sessionDirNames('/home/user2/p', '/home/u', '/tmp')).toEqual(['--home-user2-p--'])
    expect(sessionDirNames('relative/dir', '/home/u', '/tmp')).toEqual(['--relative-dir--'])
  })

  it('lists, finds recent and continues what the agent filed under -proj, and follows a directory it renamed', async () => {
    const cwd = join(home.home, 'proj')
    const written = await runReader<{ file: string }>('omp', { op: 'write', cwd, image: sampleImage(3) }, home)
    expect(written.file).toContain(join(home.agentDir, 'sessions', '-proj'))
    const agentId = /_([^_]+)\.jsonl$/.exec(written.file)![1]!

    server = await startDiskServer(home.agentDir)
    const ours = await http(server.app, 'POST', '/v1/sessions', { cwd })
    const oursId = ours.body.header.id as string
    const appended = await http(server.app, 'POST', `/v1/sessions/${oursId}/entries`, {
      entries: [
        { type: 'message', message: { role: 'user', content: 'hi' } },
        { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'hello' }], provider: 'openai', model: 'gpt-4o' } },
      ],
    })
    expect(appended.body.persisted).toBe(true)
    const legacyDir = join(home.agentDir, 'sessions', sessionDirNames(cwd)[0]!)
    expect(readdirSync(legacyDir)).toHaveLength(1)

    const ids = async (url: string): Promise<string[]> => ((await http(server!.app, 'GET', url)).body.sessions as Json[]).map((s) => s.id as string).sort()
    const q = encodeURIComponent(cwd)
    expect(await ids(`/v1/sessions?cwd=${q}`)).toEqual([agentId, oursId].sort())
    expect(await ids(`/v1/sessions/recent?cwd=${q}`)).toEqual([agentId, oursId].sort())

    // Restart (the session is no longer open), then let the agent list the cwd: it moves our directory.
    await server.stop()
    server = await startDiskServer(home.agentDir)
    const listed = await runReader<{ sessions: Json[] }>('omp', { op: 'list', cwd }, home)
    expect(listed.sessions.map((s) => s.id).sort()).toEqual([agentId, oursId].sort())
    expect(existsSync(legacyDir)).toBe(false)

    const again = await http(server.app, 'GET', `/v1/sessions/${oursId}`)
    expect(again.status, again.raw).toBe(200)
    expect(await ids(`/v1/sessions?cwd=${q}`)).toEqual([agentId, oursId].sort())
    const more = await http(server.app, 'POST', `/v1/sessions/${oursId}/entries`, { type: 'message', message: { role: 'user', content: 'still here' } })
    expect(more.status, more.raw).toBe(201)
    expect(more.body.persisted).toBe(true)
    const cont = await http(server.app, 'POST', '/v1/sessions/continue', { cwd })
    expect(cont.status, cont.raw).toBe(200)
    expect(cont.body.header.id).toBe(oursId)
  }, 120_000)
})
