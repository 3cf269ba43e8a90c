/**
 * One dedicated connection that LISTENs on a channel, kept up by itself: when the connection
 * drops (the database restarted, a network cut or reset) or stops answering (a stalled network,
 * found by a `SELECT 1` every `timeoutMs` that must answer within `timeoutMs`), it is given up
 * and a new one is made, with a doubling delay up to 5 s between attempts. `onReconnect` says
 * so, since whatever was notified meanwhile is lost and the caller must re-read what it watches.
 */
import pg from 'pg'
import type { Logger } from '../../session/logger.js'

export interface ListenOptions {
  url: string
  channel: string
  /** First delay before reconnecting, doubled up to 5 s. */
  reconnectMs: number
  /** Longest wait for connecting, and for the heartbeat's answer; also the heartbeat's period. */
  timeoutMs: number
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
  #heartbeat: NodeJS.Timeout | undefined
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
    clearInterval(this.#heartbeat)
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => {})
  }

  async #connectOnce (): Promise<void> {
    const { url, channel, logger, timeoutMs } = this.#options
    while (!this.#closed) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, keepAlive: true, application_name: 'session-store-listen' })
      client.on('error', (err) => { logger.warn({ err, channel }, 'The LISTEN connection failed; reconnecting') })
      try {
        await client.connect()
        await withTimeout(client.query(`LISTEN ${channel}`), timeoutMs)
      } catch (err) {
        abandon(client)
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
      client.on('notification', (msg) => { if (this.#client === client) this.#options.onNotification(msg.payload) })
      client.once('end', () => { this.#lost(client) })
      this.#heartbeat = setInterval(() => { void this.#beat(client) }, timeoutMs)
      this.#heartbeat.unref()
      if (this.connections > 1) this.#options.onReconnect(this.#lostAt)
      return
    }
  }

  async #beat (client: pg.Client): Promise<void> {
    try {
      await withTimeout(client.query('SELECT 1'), this.#options.timeoutMs)
    } catch (err) {
      if (this.#client !== client) return
      this.#options.logger.warn({ err, channel: this.#options.channel }, 'The LISTEN connection stopped answering; reconnecting')
      abandon(client)
      this.#lost(client)
    }
  }

  /** `client` is gone (ended, or given up): a new connection is made, once per loss. */
  #lost (client: pg.Client): void {
    if (this.#client !== client) return
    clearInterval(this.#heartbeat)
    this.#client = undefined
    this.#lostAt = Date.now()
    if (!this.#closed) void this.connect()
  }
}

/** Closes `client` without waiting for the database: on a stalled network it would never answer. */
function abandon (client: pg.Client): void {
  void client.end().catch(() => {})
  ;(client as unknown as { connection?: { stream?: { destroy: () => void } } }).connection?.stream?.destroy()
}

async function withTimeout<T> (promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new Error(`No answer from the database within ${ms} ms`)) }, ms)
    })])
  } finally {
    clearTimeout(timer)
  }
}
