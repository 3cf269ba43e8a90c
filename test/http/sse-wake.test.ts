/**
 * Wake-ups of live streams are spread over event-loop turns, a slice of connections at a time,
 * so that one append's fan-out to many subscribers does not hold up the requests behind it; the
 * first slice goes as soon as the code that woke it is done, ahead of the I/O already waiting.
 */
import { EventEmitter } from 'node:events'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SseConnection, type WakeReason } from '../../src/http/sse.js'

/** A connection over a stand-in response that accepts every write (kept in `written`, if given). */
function connection (heartbeatMs = 60_000, written: string[] = []): SseConnection {
  const raw = Object.assign(new EventEmitter(), {
    writableNeedDrain: false,
    writableLength: 0,
    writeHead () {},
    flushHeaders () {},
    write (chunk: string | Buffer) { written.push(String(chunk)); return true },
    end () {},
    destroy () {},
  })
  const reply = { raw, hijack () {}, getHeaders: () => ({}), log: { info () {} } } as unknown as FastifyReply
  const req = { raw: { socket: { destroyed: false } } } as unknown as FastifyRequest
  return new SseConnection(req, reply, { heartbeatMs, maxBufferedBytes: 1 << 20, drainTimeoutMs: 1000 })
}

const turn = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

describe('SseConnection.wake', () => {
  it('wakes 100 connections per event-loop turn, each once however often it was woken', async () => {
    const conns = Array.from({ length: 250 }, () => connection())
    const woken: WakeReason[] = []
    for (const conn of conns) void conn.nextWake().then((reason) => woken.push(reason))
    for (const conn of conns) {
      conn.wake()
      conn.wake()
    }
    expect(woken).toHaveLength(0) // not inside the code that woke them
    const counts: number[] = []
    for (let i = 0; i < 4; i++) {
      await turn()
      counts.push(woken.length)
    }
    expect(counts).toEqual([100, 200, 250, 250])
    expect(new Set(woken)).toEqual(new Set(['wake']))
    for (const conn of conns) conn.end()
  })

  it('wakes the first slice before the event loop goes on: ahead of callbacks queued before the wake-up', async () => {
    const conns = Array.from({ length: 150 }, () => connection())
    let woken = 0
    for (const conn of conns) void conn.nextWake().then(() => { woken++ })
    const seen: number[] = []
    setImmediate(() => { seen.push(woken) }) // I/O handled in the same turn comes before immediates
    for (const conn of conns) conn.wake()
    expect(woken).toBe(0)
    await turn()
    await turn()
    expect(seen).toEqual([100])
    expect(woken).toBe(150)
    for (const conn of conns) conn.end()
  })

  it('remembers a wake-up that came while nobody waited', async () => {
    const conn = connection()
    conn.wake()
    await turn()
    expect(await conn.nextWake()).toBe('wake')
    conn.end()
    expect(await conn.nextWake()).toBe('closed')
  })
})

describe('SseConnection.onWake', () => {
  it('handles a wake-up in place while nextWake waits, and resolves nextWake when it does not', async () => {
    const conn = connection()
    let calls = 0
    let handle = true
    conn.onWake(() => { calls++; return handle })
    let woken = 0
    void conn.nextWake().then(() => { woken++ })
    conn.wake()
    await turn()
    expect([calls, woken]).toEqual([1, 0])
    handle = false
    conn.wake()
    await turn()
    expect([calls, woken]).toEqual([2, 1])
    conn.end()
  })
})

describe('SseConnection heartbeat', () => {
  afterEach(() => { vi.useRealTimers() })

  it('pings after a silence, never one longer than heartbeatMs, and not while writes keep coming', () => {
    vi.useFakeTimers()
    const written: string[] = []
    const conn = connection(1000, written)
    const pings = (): number => written.filter((w) => w === ': ping\n\n').length
    const timers = vi.getTimerCount()
    for (let i = 0; i < 50; i++) { // a write every 400 ms: never silent for long
      conn.send('event: entry\ndata: {}\n\n')
      vi.advanceTimersByTime(400)
    }
    expect(pings()).toBe(0)
    expect(vi.getTimerCount()).toBe(timers)
    vi.advanceTimersByTime(1000) // silent since the last write: pinged within heartbeatMs
    expect(pings()).toBe(1)
    vi.advanceTimersByTime(10_000) // idle: about one ping per heartbeatMs
    expect(pings()).toBeGreaterThanOrEqual(10)
    expect(pings()).toBeLessThanOrEqual(12)
    conn.end()
    expect(vi.getTimerCount()).toBe(timers - 1)
  })
})
