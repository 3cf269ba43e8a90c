/**
 * The README's curl walk-through works as written: its commands run in order against a real
 * server, with only the address replaced by the test server's.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from './helpers/server-process.js'

const README = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8')

/** The shell commands of the walk-through block, continuation lines joined, comments dropped. */
function walkThroughCommands (): string[] {
  const section = README.slice(README.indexOf('## Walk-through'))
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  return block.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'))
}

let server: ServerProcess
let dataDir: string
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ss-readme-'))
  server = await startServer({ DATA_DIR: dataDir })
})
afterAll(async () => {
  server.child.kill('SIGTERM')
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
})

describe('README walk-through', () => {
  it('creates, appends, reads the context and streams, as written', () => {
    const commands = walkThroughCommands()
    expect(commands).toHaveLength(5)
    const host = new URL(server.baseUrl).host
    const outputs = commands.map((command) => {
      const result = spawnSync('bash', ['-c', command.replaceAll('localhost:8787', host)], { encoding: 'utf8' })
      // curl exits 28 when --max-time ends the live stream; anything else non-zero is a failure.
      expect([0, 28]).toContain(result.status)
      return result.stdout
    })
    expect(JSON.parse(outputs[0]!)).toMatchObject({ header: { id: 'demo', title: 'Fix the flaky test' }, persisted: false })
    expect(JSON.parse(outputs[1]!)).toMatchObject({ firstSeq: 1, persisted: false })
    expect(JSON.parse(outputs[2]!)).toMatchObject({ firstSeq: 2, persisted: true })
    const context = JSON.parse(outputs[3]!)
    expect(context.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])
    expect(context.models).toEqual({ default: 'openai/gpt-4o' })
    expect(outputs[4]).toMatch(/^retry: 1000\n/)
    expect(outputs[4]).toContain('event: entry\nid: 2\n')
    expect(outputs[4]).not.toContain('id: 1\n')
  })
})
