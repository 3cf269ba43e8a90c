/**
 * A TCP proxy between a server and its database, to break the network between them without
 * touching the database itself. Faults on the connections open now:
 * - `stall()`: nothing passes either way, and new connections hang too, until `restore()`;
 * - `drop()`: each is closed on both sides (FIN);
 * - `reset()`: each is reset on both sides (RST);
 * - `halfClose()`: the server's side is ended (FIN) while the database's side stays open and
 *   hears nothing more;
 * - `cut()`: each is closed and new ones are refused, until `restore()`.
 * After `drop`, `reset` and `halfClose` new connections go through.
 */
import { once } from 'node:events'
import { connect, createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

/** One proxied connection: the server's socket and the database's. */
interface Pair { client: Socket, upstream: Socket }

export class TcpProxy {
  readonly #server: Server
  readonly #pairs = new Set<Pair>()
  /** Half-closed connections, their database side still open until `close()`. */
  readonly #halfClosed: Pair[] = []
  #refusing = false
  #stalled = false
  port = 0

  private constructor (targetHost: string, targetPort: number) {
    this.#server = createServer((client) => {
      if (this.#refusing) {
        client.destroy()
        return
      }
      const pair = { client, upstream: connect(targetPort, targetHost) }
      this.#pairs.add(pair)
      for (const s of [client, pair.upstream]) {
        s.on('close', () => { this.#pairs.delete(pair) })
        s.on('error', () => { client.destroy(); pair.upstream.destroy() })
      }
      if (!this.#stalled) flow(pair)
    })
  }

  static async start (targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort)
    proxy.#server.listen(0, '127.0.0.1')
    await once(proxy.#server, 'listening')
    proxy.port = (proxy.#server.address() as AddressInfo).port
    return proxy
  }

  /** `url` (a database URL) pointed at this proxy. */
  via (url: string): string {
    const u = new URL(url)
    u.hostname = '127.0.0.1'
    u.port = String(this.port)
    return u.toString()
  }

  /** Connections open through the proxy now. */
  get connections (): number { return this.#pairs.size }

  stall (): void {
    this.#stalled = true
    for (const pair of this.#pairs) {
      pair.client.unpipe(pair.upstream)
      pair.upstream.unpipe(pair.client)
      pair.client.pause()
      pair.upstream.pause()
    }
  }

  drop (): void {
    for (const { client, upstream } of this.#take()) { client.destroy(); upstream.destroy() }
  }

  reset (): void {
    for (const { client, upstream } of this.#take()) { client.resetAndDestroy(); upstream.resetAndDestroy() }
  }

  halfClose (): void {
    for (const pair of this.#take()) {
      const { client, upstream } = pair
      this.#halfClosed.push(pair)
      upstream.unpipe(client)
      upstream.pause()
      client.unpipe(upstream)
      // What the server still sends is read and thrown away; the database hears nothing more.
      client.on('data', () => {})
      client.end()
    }
  }

  cut (): void {
    this.#refusing = true
    this.drop()
  }

  /** New connections go through again, and stalled ones flow again. */
  restore (): void {
    this.#refusing = false
    if (!this.#stalled) return
    this.#stalled = false
    for (const pair of this.#pairs) flow(pair)
  }

  async close (): Promise<void> {
    this.cut()
    for (const { client, upstream } of this.#halfClosed.splice(0)) { client.destroy(); upstream.destroy() }
    this.#server.close()
    await once(this.#server, 'close').catch(() => {})
  }

  /** The open connections, forgotten by the proxy (their sockets are the caller's to break). */
  #take (): Pair[] {
    const pairs = [...this.#pairs]
    this.#pairs.clear()
    return pairs
  }
}

function flow ({ client, upstream }: Pair): void {
  client.pipe(upstream)
  upstream.pipe(client)
}
