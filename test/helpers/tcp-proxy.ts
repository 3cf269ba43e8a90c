/**
 * A TCP proxy between a server and its database, to take the database away from one server and
 * give it back without touching the database itself: `cut()` closes every connection and
 * refuses new ones, `restore()` lets them through again.
 */
import { once } from 'node:events'
import { connect, createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

export class TcpProxy {
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  #cut = false
  port = 0

  private constructor (targetHost: string, targetPort: number) {
    this.#server = createServer((client) => {
      if (this.#cut) {
        client.destroy()
        return
      }
      const upstream = connect(targetPort, targetHost)
      for (const s of [client, upstream]) {
        this.#sockets.add(s)
        s.on('close', () => { this.#sockets.delete(s) })
        s.on('error', () => { client.destroy(); upstream.destroy() })
      }
      client.pipe(upstream)
      upstream.pipe(client)
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

  cut (): void {
    this.#cut = true
    for (const s of [...this.#sockets]) s.destroy()
  }

  restore (): void {
    this.#cut = false
  }

  async close (): Promise<void> {
    this.cut()
    this.#server.close()
    await once(this.#server, 'close').catch(() => {})
  }
}
