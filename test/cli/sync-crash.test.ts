/**
 * `sync` killed with SIGKILL at 10 random points while an agent keeps writing (whole lines and
 * lines in two pieces, in two sessions), each kill followed by a rerun: in the end the server
 * holds every entry of both files exactly once, and each file byte for byte.
 */
import { appendFileSync, readFileSync } from 'node:fs'
import { afterEach, expect, it } from 'vitest'
import { createRng, seedFromEnv } from '../faults/support/prng.js'
import { startCli } from './helpers.js'
import { agentDir, assistant, eventually, exported, header, lines, listeningApp, user, writeSession, type Json } from './agent-dir.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c() })

const KILLS = 10

it(`loses and duplicates nothing across ${KILLS} kill -9 and reruns`, async () => {
  const dir = agentDir()
  const server = await listeningApp()
  cleanups.push(dir.cleanup, server.stop)
  const rng = createRng(seedFromEnv())
  const random = rng.next
  const files = ['k1', 'k2'].map((id) => ({ id, path: writeSession(dir, '--work-demo--', id, lines(header(id), user(`${id}-0`, null))), last: `${id}-0`, n: 0 }))

  // The agent: one line every few ms, alternating files, every third one written in two pieces.
  const writing = { on: true }
  const writer = (async () => {
    while (writing.on) {
      const f = files[Math.floor(random() * files.length)]!
      const id = `${f.id}-${++f.n}`
      const record: Json = f.n % 2 === 0 ? user(id, f.last) : assistant(id, f.last)
      f.last = id
      const line = JSON.stringify(record) + '\n'
      if (f.n % 3 === 0) {
        appendFileSync(f.path, line.slice(0, 30))
        await new Promise((resolve) => setTimeout(resolve, 5))
        appendFileSync(f.path, line.slice(30))
      } else {
        appendFileSync(f.path, line)
      }
      await new Promise((resolve) => setTimeout(resolve, 8))
    }
  })()

  const killedAfter: number[] = []
  for (let k = 0; k < KILLS; k++) {
    const run = startCli(['sync', dir.sessions, '--server', server.url, '--interval', '20'])
    const ms = 250 + Math.floor(random() * 700)
    await new Promise((resolve) => setTimeout(resolve, ms))
    run.child.kill('SIGKILL')
    expect(await run.exited, `seed ${rng.seed}`).toBeNull()
    killedAfter.push(ms)
  }
  writing.on = false
  await writer

  const last = startCli(['sync', dir.sessions, '--server', server.url, '--interval', '50'])
  cleanups.push(async () => { last.child.kill('SIGKILL'); await last.exited })
  for (const f of files) {
    await eventually(async () => await exported(server.app, f.id) === readFileSync(f.path, 'utf8'), `${f.id} converged`, 20_000)
    const ids = readFileSync(f.path, 'utf8').trim().split('\n').slice(1).map((l) => (JSON.parse(l) as { id: string }).id)
    const res = await server.app.inject({ method: 'GET', url: `/v1/sessions/${f.id}/entries?limit=1000` })
    const stored = (res.json() as { entries: Array<{ id: string }> }).entries.map((e) => e.id)
    expect(stored, `seed ${rng.seed}, kills after ${killedAfter.join(', ')} ms`).toEqual(ids)
    expect(new Set(stored).size).toBe(stored.length)
    expect(stored.length).toBe(f.n + 1)
  }
  expect(killedAfter).toHaveLength(KILLS)
}, 120_000)
