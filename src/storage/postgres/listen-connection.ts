/**
 * One dedicated connection that LISTENs on a channel, kept up by itself: when the connection
 * drops (the database restarted, a network cut) it reconnects with a doubling delay up to 5 s,
 * and says so through `onReconnect`, since whatever was notified meanwhile is lost and the
 * caller must re-read what it watches.
 */
import pg from 'pg'
import type { Logger } from '../../session/logger.js'

export interface ListenOptions {
  url: string
  channel: string
  /** First delay before reconnecting, doubled up to 5 s. */
  reconnectMs: number
  logger: Logger
  /** A notification's payload. */
  onNotification: (payload: string | undefined) => void
  /**
   * The connection came back after a loss (never called for the first connect); `lostAt` is
   * when the loss was noticed, epoch ms.
   */
  onReconnect: (lostAt: number) => void
}

export class ListenConnection {
  readonly #options: ListenOptions
  #client: pg.Client | undefined
  #closed = false
  #delay: number
  #connecting: Promise<void> | undefined
  /** When the connection was last lost, epoch ms. */
  #lostAt = 0
  /** Connections made so far (1 after start, +1 per reconnect). */
  connections = 0

  constructor (options: ListenOptions) {
    this.#options = options
    this.#delay = options.reconnectMs
  }

  /** Connects and LISTENs; while the database is down this keeps trying (and so waits). */
  async connect (): Promise<void> {
    this.#connecting ??= this.#connectOnce().finally(() => { this.#connecting = undefined })
    await this.#connecting
  }

  async close (): Promise<void> {
    this.#closed = true
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => {})
  }

  async #connectOnce (): Promise<void> {
    const { url, channel, logger } = this.#options
    while (!this.#closed) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, keepAlive: true, application_name: 'session-store-listen' })
      client.on('error', (err) => { logger.warn({ err, channel }, 'The LISTEN connection failed; reconnecting') })
      try {
        await client.connect()
        await client.query(`LISTEN ${channel}`)
      } catch (err) {
        await client.end().catch(() => {})
        logger.info({ err, channel }, 'LISTEN connection not possible yet')
        await new Promise((resolve) => setTimeout(resolve, this.#delay))
        this.#delay = Math.min(5000, this.#delay * 2)
        continue
      }
      if (this.#closed) {
        await client.end().catch(() => {})
        return
      }
      this.#client = client
      this.#delay = this.#options.reconnectMs
      this.connections++
      client.on('notification', (msg) => { this.#options.onNotification(msg.payload) })
      client.once('end', () => {
        this.#lostAt = Date.now()
        if (this.#client === client) this.#client = undefined
        if (!this.#closed) void this.connect()
      })
      if (this.connections > 1) this.#options.onReconnect(this.#lostAt)
      return
    }
  }
}
