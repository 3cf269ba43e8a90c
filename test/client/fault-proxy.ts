/**
 * An HTTP proxy in front of a test server that injects faults: it drops the connection before
 * the server sees a request, drops it after the server answered (the answer is lost), answers
 * a status of its own, or cuts an event stream after some bytes. It records every request.
 */
import { once } from 'node:events'
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * `drop`: close the socket before forwarding. `drop-after`: forward, let the server answer,
 * then close the socket without passing the answer on. A number: answer that status with a
 * problem+json body. `{ cutAfterBytes }`: pass that many bytes of the answer's body, then close.
 */
export type Fault = 'drop' | 'drop-after' | number | { cutAfterBytes: number }

export interface SeenRequest { method: string, url: string, headers: IncomingHttpHeaders }

interface Rule { match: (req: SeenRequest) => boolean, fault: Fault, times: number }

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding'])

export class FaultProxy {
  readonly seen: SeenRequest[] = []
  readonly #rules: Rule[] = []
  readonly #streams = new Set<() => void>()
  readonly #server: Server
  readonly #target: URL
  baseUrl = ''

  private constructor (target: string) {
    this.#target = new URL(target)
    this.#server = createServer((req, res) => { this.#handle(req, res) })
  }

  static async start (target: string): Promise<FaultProxy> {
    const proxy = new FaultProxy(target)
    proxy.#server.listen(0, '127.0.0.1')
    await once(proxy.#server, 'listening')
    proxy.baseUrl = `http://127.0.0.1:${(proxy.#server.address() as AddressInfo).port}`
    return proxy
  }

  /** The next `times` requests that match meet `fault`. */
  inject (match: (req: SeenRequest) => boolean, fault: Fault, times = 1): void {
    this.#rules.push({ match, fault, times })
  }

  /** Requests seen with this method whose URL path (without query) is `path`. */
  requests (method: string, path: string): SeenRequest[] {
    return this.seen.filter((r) => r.method === method && r.url.split('?')[0] === path)
  }

  /** Closes every open event stream on the client side; returns how many. */
  cutStreams (): number {
    const cuts = [...this.#streams]
    for (const cut of cuts) cut()
    return cuts.length
  }

  async close (): Promise<void> {
    this.cutStreams()
    this.#server.closeAllConnections()
    this.#server.close()
    await once(this.#server, 'close')
  }

  #take (seen: SeenRequest): Fault | undefined {
    const rule = this.#rules.find((r) => r.times > 0 && r.match(seen))
    if (rule === undefined) return undefined
    rule.times--
    return rule.fault
  }

  #handle (req: IncomingMessage, res: ServerResponse): void {
    const seen = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }
    this.seen.push(seen)
    const fault = this.#take(seen)
    if (fault === 'drop') {
      req.socket.destroy()
      return
    }
    if (typeof fault === 'number') {
      req.resume()
      const body = JSON.stringify({ type: 'about:blank', title: 'Injected', status: fault, code: 'SS_INJECTED', detail: 'injected fault' })
      res.writeHead(fault, { 'content-type': 'application/problem+json' }).end(body)
      return
    }
    this.#forward(req, res, fault)
  }

  #forward (req: IncomingMessage, res: ServerResponse, fault: 'drop-after' | { cutAfterBytes: number } | undefined): void {
    const upstream = request(new URL(req.url ?? '/', this.#target), { method: req.method, headers: req.headers })
    const cut = (): void => {
      this.#streams.delete(cut)
      upstream.destroy()
      req.socket.destroy()
    }
    res.on('close', () => { this.#streams.delete(cut); upstream.destroy() })
    upstream.on('error', () => { req.socket.destroy() })
    upstream.on('response', (up) => {
      if (fault === 'drop-after') {
        up.resume()
        up.on('end', () => { req.socket.destroy() })
        return
      }
      const headers = Object.fromEntries(Object.entries(up.headers).filter(([name]) => !HOP_BY_HOP.has(name)))
      res.writeHead(up.statusCode ?? 502, headers)
      res.flushHeaders()
      if (String(up.headers['content-type']).startsWith('text/event-stream')) this.#streams.add(cut)
      let left = typeof fault === 'object' ? fault.cutAfterBytes : Infinity
      up.on('data', (chunk: Buffer) => {
        if (chunk.length >= left) {
          res.write(chunk.subarray(0, left), () => { cut() })
          left = 0
          up.pause()
          return
        }
        left -= chunk.length
        res.write(chunk)
      })
      up.on('end', () => { if (left > 0) res.end() })
    })
    req.pipe(upstream)
  }
}
