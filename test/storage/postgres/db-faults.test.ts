/**
 * Faults on the network between a server and PostgreSQL, not a database restart: server A
 * reaches the database through a TCP proxy that stalls, drops, resets or half-closes its
 * connections; server B reaches it directly. Whatever the fault, an append on A answers within
 * DATABASE_TIMEOUT_MS (201, or 503 with Retry-After), never hangs; once the network is back A
 * serves again by itself; every acknowledged entry is stored, once, in order; and streams open
 * on both servers all along (resumed with Last-Event-ID when one ends) tell of every entry once.
 */
import { describe, expect, it } from 'vitest'
import { pgAvailable } from '../../helpers/pg.js'
import { assistant, message, user } from '../../http/session-helpers.js'
import { SseClient } from '../../sse-client.js'
import { call } from './server-calls.js'
import { useTwoServers } from './two-servers.js'

/** A's DATABASE_TIMEOUT_MS. */
const TIMEOUT_MS = 1000
/** What an answer may take beyond it: the request, the answer and a loaded machine's scheduling. */
const SLACK_MS = 1500

/** A stream of a session's entries that picks up where it ended (`Last-Event-ID`), as EventSource does. */
class ResumingStream {
  readonly seqs: number[] = []
  readonly #url: string
  #client: SseClient | undefined
  #closed = false
  resumed = 0

  constructor (url: string) { this.#url = url }

  async start (): Promise<void> {
    this.#client = await SseClient.connect(this.#url)
    expect(this.#client.statusCode).toBe(200)
    void this.#follow(this.#client)
  }

  async #follow (client: SseClient): Promise<void> {
    let taken = 0
    for (;;) {
      await client.waitFor(() => client.seqs.length > taken || client.ended, 3_600_000).catch(() => {})
      this.seqs.push(...client.seqs.slice(taken))
      taken = client.seqs.length
      if (!client.ended || this.#closed) { if (this.#closed) return; continue }
      // Ended: resume after the last entry seen, retrying while the server cannot answer.
      for (;;) {
        if (this.#closed) return
        await new Promise((resolve) => setTimeout(resolve, 200))
        const last = this.seqs.at(-1)
        const next = await SseClient.connect(this.#url, last === undefined ? {} : { 'last-event-id': String(last) }).catch(() => undefined)
        if (next?.statusCode === 200) { this.#client = next; this.resumed++; break }
        next?.close()
      }
      void this.#follow(this.#client)
      return
    }
  }

  async waitForCount (n: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.seqs.length < n) {
      if (Date.now() > deadline) throw new Error(`stream has ${this.seqs.length} of ${n} entries`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }

  close (): void {
    this.#closed = true
    this.#client?.close()
  }
}

type Fault = 'stall' | 'drop' | 'reset' | 'halfClose'

describe.runIf(pgAvailable)('faults between a server and its database', () => {
  const servers = useTwoServers({ proxied: 'a', env: { a: { DATABASE_TIMEOUT_MS: String(TIMEOUT_MS) } } })

  /** Appends a user message `text` on `base`; the answer's status, its time and its Retry-After. */
  async function appendText (base: string, id: string, text: string): Promise<{ status: number, ms: number, code?: string, retryAfter?: unknown }> {
    const start = Date.now()
    const res = await call(base, 'POST', `/v1/sessions/${id}/entries`, message(user(text)))
    return { status: res.status, ms: Date.now() - start, code: res.body?.code, retryAfter: res.headers['retry-after'] }
  }

  async function faultRun (fault: Fault): Promise<void> {
    const created = await call(servers.b.baseUrl, 'POST', '/v1/sessions', { cwd: `/work/fault-${fault}` })
    expect(created.status).toBe(201)
    const id = created.body.header.id as string
    const entries = `/v1/sessions/${id}/entries`
    expect((await call(servers.b.baseUrl, 'POST', entries, { entries: [message(user('hello')), message(assistant('hi'))] })).status).toBe(201)
    const acked = ['hello']
    const onA = new ResumingStream(`${servers.a.baseUrl}${entries.replace(/entries$/, 'events')}`)
    const onB = new ResumingStream(`${servers.b.baseUrl}${entries.replace(/entries$/, 'events')}`)
    await onA.start()
    await onB.start()
    try {
      for (let i = 0; i < 3; i++) {
        const before = await appendText(servers.a.baseUrl, id, `${fault} before ${i}`)
        expect(before.status).toBe(201)
        acked.push(`${fault} before ${i}`)
      }

      servers.proxy[fault]()
      const during: number[] = []
      for (let i = 0; i < 4; i++) {
        const text = `${fault} during ${i}`
        const answer = await appendText(servers.a.baseUrl, id, text)
        during.push(answer.status)
        expect(answer.ms, `${text}: ${answer.status}`).toBeLessThanOrEqual(TIMEOUT_MS + SLACK_MS)
        if (answer.status === 201) acked.push(text)
        else {
          expect(answer.status).toBe(503)
          expect(answer.code).toBe('SS_DATABASE_UNAVAILABLE')
          expect(Number(answer.retryAfter)).toBeGreaterThan(0)
        }
      }
      // A stalled network answers nothing: every append in it runs out of time.
      if (fault === 'stall') expect(during).toEqual([503, 503, 503, 503])
      // Meanwhile B, on a network of its own, goes on.
      expect((await appendText(servers.b.baseUrl, id, `${fault} on B during`)).status).toBe(201)
      acked.push(`${fault} on B during`)
      servers.proxy.restore()

      // A serves again by itself, within a few timeouts.
      const deadline = Date.now() + 10 * TIMEOUT_MS
      for (let i = 0; ; i++) {
        const text = `${fault} after ${i}`
        const answer = await appendText(servers.a.baseUrl, id, text)
        expect(answer.ms).toBeLessThanOrEqual(TIMEOUT_MS + SLACK_MS)
        if (answer.status === 201) { acked.push(text); break }
        expect(answer.status).toBe(503)
        expect(Date.now()).toBeLessThan(deadline)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      for (const base of [servers.a.baseUrl, servers.b.baseUrl, servers.a.baseUrl]) {
        const text = `${fault} last on ${base === servers.a.baseUrl ? 'A' : 'B'} ${acked.length}`
        expect((await appendText(base, id, text)).status).toBe(201)
        acked.push(text)
      }

      // Every acknowledged entry is stored, once, in the order acknowledged; nothing else but
      // appends whose answer was a timeout (their fate was unknown to the client).
      const stored = (await call(servers.b.baseUrl, 'GET', `${entries}?limit=1000`)).body.entries as Array<{ id: string, parentId: string | null, message?: { content: unknown } }>
      const texts = stored.map((e) => JSON.stringify(e.message?.content))
      const ackedTexts = acked.map((t) => JSON.stringify(user(t).content))
      expect(texts.filter((t) => ackedTexts.includes(t))).toEqual(ackedTexts)
      for (const t of texts) if (!ackedTexts.includes(t) && t !== JSON.stringify(assistant('hi').content)) expect(t).toMatch(new RegExp(`${fault} during`))
      stored.forEach((e, i) => { expect(e.parentId).toBe(i === 0 ? null : stored[i - 1]?.id) })

      // The streams on both servers tell of every stored entry, each once, in order.
      for (const stream of [onA, onB]) {
        await stream.waitForCount(stored.length)
        expect(stream.seqs).toEqual(stored.map((_, i) => i + 1))
      }
    } finally {
      onA.close()
      onB.close()
    }
  }

  it('a stalled network: appends answer 503 within the timeout, then A recovers; nothing acknowledged is lost', async () => {
    await faultRun('stall')
  }, 60_000)

  it('connections dropped (FIN) under A: nothing acknowledged is lost, streams resume', async () => {
    await faultRun('drop')
  }, 60_000)

  it('connections reset (RST) under A: nothing acknowledged is lost, streams resume', async () => {
    await faultRun('reset')
  }, 60_000)

  it('connections half-closed under A: nothing acknowledged is lost, streams resume', async () => {
    await faultRun('halfClose')
  }, 60_000)

  it('a stall longer than the heartbeat: A gives its LISTEN connection up, and hears of B again once the network is back', async () => {
    const created = await call(servers.b.baseUrl, 'POST', '/v1/sessions', { cwd: '/work/fault-listen' })
    const id = created.body.header.id as string
    expect((await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, { entries: [message(user('hello')), message(assistant('hi'))] })).status).toBe(201)
    const onA = new ResumingStream(`${servers.a.baseUrl}/v1/sessions/${id}/events`)
    await onA.start()
    try {
      await onA.waitForCount(2)
      const gaveUp = (): number => servers.a.output.filter((line) => line.includes('The LISTEN connection stopped answering')).length
      const before = gaveUp()
      servers.proxy.stall()
      await new Promise((resolve) => setTimeout(resolve, 3 * TIMEOUT_MS))
      // What B appends while A's connections hang is not heard by A now...
      for (let i = 0; i < 3; i++) expect((await appendText(servers.b.baseUrl, id, `while A hangs ${i}`)).status).toBe(201)
      servers.proxy.restore()
      // ...but once the network is back, A's new LISTEN connection reads what it missed.
      await onA.waitForCount(5, 20_000)
      expect(onA.seqs).toEqual([1, 2, 3, 4, 5])
      expect(gaveUp()).toBeGreaterThan(before)
    } finally {
      onA.close()
    }
  }, 60_000)
})
