/**
 * Many writers on several servers appending to one session at once (STORAGE=postgres), none
 * with `If-Match`: another server appending first is no failure, the append goes after it. Every
 * append is answered 201, the entries make one chain in the order of their `seq`, and `seq` is
 * contiguous; on every server alike.
 */
import { describe, expect, it } from 'vitest'
import { pgAvailable } from '../../helpers/pg.js'
import type { ServerProcess } from '../../helpers/server-process.js'
import { assistant, message, user } from '../../http/session-helpers.js'
import { call } from './server-calls.js'
import { useTwoServers } from './two-servers.js'

interface Entry { id: string, parentId: string | null, message?: { content: unknown } }

async function allEntries (base: string, id: string): Promise<Entry[]> {
  const res = await call(base, 'GET', `/v1/sessions/${id}/entries?limit=1000`)
  expect(res.status).toBe(200)
  return res.body.entries
}

/** `writers` loops, spread over `servers` in turn, each appending `appends` entries one after another. */
async function write (servers: ServerProcess[], id: string, writers: number, appends: number): Promise<Array<{ status: number, firstSeq: number }>> {
  const answers = await Promise.all(Array.from({ length: writers }, async (_, w) => {
    const base = (servers[w % servers.length] as ServerProcess).baseUrl
    const mine: Array<{ status: number, firstSeq: number }> = []
    for (let i = 0; i < appends; i++) {
      const res = await call(base, 'POST', `/v1/sessions/${id}/entries`, message(user(`w${w} a${i}`)))
      mine.push({ status: res.status, firstSeq: res.body?.firstSeq })
    }
    return mine
  }))
  return answers.flat()
}

async function expectOneChain (servers: ServerProcess[], id: string, writers: number, appends: number): Promise<void> {
  const want = Array.from({ length: writers * appends }, (_, n) => `w${n % writers} a${Math.floor(n / writers)}`).sort()
  for (const server of servers) {
    const entries = await allEntries(server.baseUrl, id)
    expect(entries).toHaveLength(2 + writers * appends)
    entries.forEach((e, i) => { expect(e.parentId).toBe(i === 0 ? null : entries[i - 1]?.id) })
    expect(entries.slice(2).map((e) => e.message?.content).sort()).toEqual(want)
  }
}

describe.runIf(pgAvailable)('writers on several servers appending to one session', () => {
  const servers = useTwoServers()

  async function savedSession (): Promise<string> {
    const created = await call(servers.a.baseUrl, 'POST', '/v1/sessions', { cwd: '/work/writers' })
    const id = created.body.header.id as string
    expect((await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, { entries: [message(user('q')), message(assistant('a'))] })).status).toBe(201)
    return id
  }

  it('20 writers, 10 on A and 10 on B, 10 appends each: 200 × 201, one chain, contiguous seq', async () => {
    const id = await savedSession()
    const answers = await write([servers.a, servers.b], id, 20, 10)
    expect(answers.map((a) => a.status)).toEqual(Array(200).fill(201))
    expect(answers.map((a) => a.firstSeq).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 3))
    await expectOneChain([servers.a, servers.b], id, 20, 10)
  }, 60_000)

  it('60 writers on 3 servers, 10 appends each: 600 × 201, one chain, contiguous seq', async () => {
    const c = await servers.start()
    const id = await savedSession()
    const answers = await write([servers.a, servers.b, c], id, 60, 10)
    expect(answers.map((a) => a.status)).toEqual(Array(600).fill(201))
    expect(answers.map((a) => a.firstSeq).sort((x, y) => x - y)).toEqual(Array.from({ length: 600 }, (_, i) => i + 3))
    await expectOneChain([servers.a, servers.b, c], id, 60, 10)
  }, 120_000)
})
