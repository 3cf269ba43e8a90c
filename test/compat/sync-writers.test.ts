/**
 * `session-store sync` following the directory the agents themselves write: pi 0.73's
 * SessionManager (Node) and oh-my-pi 18.2.3's (Bun) write user and assistant messages with
 * images, a tool result with an image, a branch, a compaction, a label, a title change and a
 * fork into their own session directories while `sync` runs. After each step, within 5 s, the
 * server's entries, tree and context equal the agent's own view of its file.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cli, startCli, type CliRun } from '../cli/helpers.js'
import { OMP_DIR } from '../setup/omp-reader.js'
import { expectViewAgrees } from './compare.js'
import { agentHome, BUN, READER_NAMES, sampleImage, startDiskServer, type AgentHome, type ReaderName, type ReaderView } from './support.js'

const STEPS = ['create', 'tool', 'branch', 'compaction', 'label', 'title', 'fork'] as const
/** How long a step may take to reach the server: the bound sync promises (a second or less alone). */
const WITHIN_MS = 5000

interface Answer { ok: boolean, error?: string, id: string, file: string, ids: Record<string, string>, view: ReaderView }

/** The agent: a child process answering one JSON line per command. */
function startAgent (reader: ReaderName, home: AgentHome): { send: (cmd: object) => Promise<Answer>, child: ChildProcess } {
  const script = reader === 'omp' ? join(OMP_DIR, 'agent-driver.mjs') : join(import.meta.dirname, 'readers', 'agent-driver.mjs')
  const child = spawn(reader === 'omp' ? BUN : process.execPath, [script], {
    cwd: reader === 'omp' ? OMP_DIR : home.home,
    env: { ...process.env, HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir, NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const answers: Array<(a: Answer) => void> = []
  createInterface({ input: child.stdout! }).on('line', (line) => { answers.shift()?.(JSON.parse(line) as Answer) })
  const send = async (cmd: object): Promise<Answer> => {
    const answer = new Promise<Answer>((resolve) => answers.push(resolve))
    child.stdin!.write(JSON.stringify(cmd) + '\n')
    return await answer
  }
  return { send, child }
}

/** Runs `check` until it passes; its last failure when `ms` run out. Resolves with the time it took. */
async function within (ms: number, check: () => Promise<unknown>): Promise<number> {
  const start = Date.now()
  for (;;) {
    try {
      await check()
      return Date.now() - start
    } catch (err) {
      if (Date.now() - start > ms) throw err
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

describe('compat: sync follows what the agents write', () => {
  const cleanups: Array<() => Promise<void> | void> = []
  afterAll(async () => { for (const c of cleanups.reverse()) await c() })

  for (const reader of READER_NAMES) {
    it(`${reader}: after each step the server serves the agent's own view of its file within ${WITHIN_MS / 1000} s`, async () => {
      const server = await startDiskServer()
      const url = await server.app.listen({ port: 0, host: '127.0.0.1' })
      const home = agentHome()
      cleanups.push(server.cleanup, home.cleanup)
      const agent = startAgent(reader, home)
      cleanups.push(() => { agent.child.kill() })
      let sync: CliRun | undefined
      const took: Record<string, number> = {}
      const files = new Map<string, string>()
      for (const op of STEPS) {
        const answer = await agent.send({ op, cwd: join(home.home, 'proj'), image: sampleImage(7), title: `Pictures (${reader})` })
        expect(answer.ok, answer.error).toBe(true)
        // sync starts after the agent made its directory, and follows it from then on.
        if (sync === undefined) {
          sync = startCli(['sync', join(home.agentDir, 'sessions'), '--server', url, '--interval', '100'])
          cleanups.push(async () => { sync!.child.kill('SIGKILL'); await sync!.exited })
        }
        took[op] = await within(WITHIN_MS, async () => {
          await expectViewAgrees(server.app, answer.id, reader, answer.view)
          const session = await server.app.inject({ method: 'GET', url: `/v1/sessions/${answer.id}` })
          expect(session.json().header.title).toBe(answer.view.header.title)
        })
        files.set(answer.id, answer.file)
      }
      expect(Object.keys(took)).toEqual([...STEPS])
      console.log(`${reader}: ms to agreement per step ${JSON.stringify(took)}`)
      expect(sync!.stderr()).toContain('following session')

      // Pulled into an empty directory, each session is the agent's file again, byte for byte.
      const elsewhere = agentHome()
      cleanups.push(elsewhere.cleanup)
      const into = join(elsewhere.agentDir, 'sessions')
      const pulled = await cli(['pull', ...files.keys(), '--server', url, '--into', into, ...(reader === 'pi' ? ['--inline-images'] : [])], { env: { HOME: home.home } })
      expect(pulled.code, pulled.stderr).toBe(0)
      expect(files.size).toBe(2)
      for (const [id, file] of files) {
        const copy = join(into, relative(join(home.agentDir, 'sessions'), file))
        expect(readFileSync(copy).equals(readFileSync(file)), `${id} pulled byte for byte`).toBe(true)
      }
    }, 180_000)
  }
})
