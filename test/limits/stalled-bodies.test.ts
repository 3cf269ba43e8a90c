/**
 * The watch on request bodies holds a request past the turn it came in only while its body is
 * still arriving: a request whose body came with its headers is let go at once, so that it
 * dies young instead of living until the next sweep.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { setImmediate as turn } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { StalledBodies } from '../../src/http/stalled-bodies.js'

/** A request and its response as the watch reads them. */
function request (complete: boolean): { req: IncomingMessage, res: ServerResponse } {
  const socket = { bytesRead: 100, destroyed: false }
  const req = { complete, socket, readableFlowing: true, readableLength: 0 } as unknown as IncomingMessage
  return { req, res: { headersSent: false } as unknown as ServerResponse }
}

const watches: StalledBodies[] = []
afterEach(() => { for (const w of watches.splice(0)) w.close() })

function watcher (stalled: IncomingMessage[]): StalledBodies {
  const w = new StalledBodies({ stallMs: 1000, onStall: (req) => { stalled.push(req) } })
  watches.push(w)
  return w
}

describe('stalled bodies', () => {
  it('lets go at the end of its turn of a request whose body is whole', async () => {
    const w = watcher([])
    const whole = request(false)
    w.watch(whole.req, whole.res)
    expect(w.size).toBe(1)
    ;(whole.req as { complete: boolean }).complete = true // the rest of the packet carried the body
    await turn()
    expect(w.size).toBe(0)
  })

  it('keeps watching a request whose body is still arriving, and hands it over once it stalls', async () => {
    const stalled: IncomingMessage[] = []
    const w = watcher(stalled)
    const slow = request(false)
    const quick = request(false)
    w.watch(slow.req, slow.res)
    w.watch(quick.req, quick.res)
    ;(quick.req as { complete: boolean }).complete = true
    await turn()
    expect(w.size).toBe(1)
    const now = performance.now()
    w.sweep(now + 500)
    expect(stalled).toEqual([])
    w.sweep(now + 1500)
    expect(stalled).toEqual([slow.req])
    expect(w.size).toBe(0)
  })
})
