/**
 * Live streams as async iterators (API.md "Live stream (SSE)") that reconnect on their own.
 *
 * Opening a stream is retried like a GET (connection failures, 502/503/504, at most `retries`
 * times). Once a stream has been open, every later drop — a reset socket, an idle timeout, the
 * server ending the response — is followed by a reconnect after the server's `retry:` delay
 * (1000 ms until one arrives), doubling per failed attempt up to 30 s, for as long as it takes.
 * A session stream reconnects with `Last-Event-ID` set to the last seq it yielded and skips any
 * seq it has already yielded, so its consumer sees every entry exactly once, in order.
 */
import type { Dispatcher } from 'undici'
import { problemFrom, SessionStoreError } from './errors.js'
import { isRetryableError, isRetryableStatus, retryDelay, sleep } from './retry.js'
import { SseParser, type SseMessage } from './sse-parser.js'
import type { Transport } from './transport.js'

/** Reconnection delay until the server sends `retry:`, in ms (the EventSource default is similar). */
const DEFAULT_RETRY_MS = 1000
/** Shortest wait after a failed reconnection attempt, in ms, even when the server asks for less. */
const MIN_RECONNECT_DELAY_MS = 100
/** Longest wait between two reconnection attempts, in ms. */
const MAX_RECONNECT_DELAY_MS = 30_000
/** Silence after which a stream counts as dropped, in ms: three of the server's 15 s heartbeats. */
export const STREAM_IDLE_MS = 45_000

/** What a stream's decoder makes of one event. */
export interface Decoded<T> {
  value?: T
  /** The stream is over for good (e.g. the session was deleted). */
  done?: boolean
}

/** One kind of stream: where it is, how to resume it, how to read its events. */
export interface StreamSource<T> {
  /** Path and query below the base URL, read again before every (re)connect. */
  path: () => string
  /** Request headers, read again before every (re)connect (e.g. `Last-Event-ID`). */
  headers: () => Record<string, string>
  /** `undefined`: the event is not for the consumer. */
  decode: (message: SseMessage) => Decoded<T> | undefined
  /** A reconnect answered 404: the final value to yield (the resource is gone). */
  gone?: () => T
}

/** A function, so that a check after an `await` is not narrowed away by an earlier one. */
const aborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true

/** Waits `ms`; false when the signal aborted meanwhile. */
async function pause (ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await sleep(ms, signal)
    return true
  } catch {
    return false
  }
}

/** Reads an error answer of a stream request into a `SessionStoreError`. */
async function failure (res: Dispatcher.ResponseData, path: string): Promise<SessionStoreError> {
  const body = Buffer.from(await res.body.arrayBuffer())
  return new SessionStoreError(problemFrom(res.statusCode, body), `GET ${path}`)
}

/**
 * Iterates the events of `source`, reconnecting as described above. Ends when the decoder says
 * so, when a reconnect finds the resource gone, or when `signal` aborts or the client closes
 * (without an error).
 * Throws `SessionStoreError` for a non-retryable error answer, and the connection error when
 * the first opening keeps failing.
 */
export function reconnecting<T> (transport: Transport, retries: number, source: StreamSource<T>, signal?: AbortSignal): AsyncGenerator<T> {
  return new ReconnectingStream(transport, retries, source, signal).events()
}

class ReconnectingStream<T> {
  readonly #transport: Transport
  readonly #retries: number
  readonly #source: StreamSource<T>
  readonly #signal: AbortSignal
  #retryMs = DEFAULT_RETRY_MS
  /** A stream has been open at least once: from now on, reconnect for as long as it takes. */
  #opened = false
  /** Failed attempts since the last successful opening. */
  #failures = 0

  constructor (transport: Transport, retries: number, source: StreamSource<T>, signal: AbortSignal | undefined) {
    this.#transport = transport
    this.#retries = retries
    this.#source = source
    // Closing the client ends the stream like an abort.
    const closing = transport.closingSignal
    this.#signal = signal === undefined ? closing : AbortSignal.any([signal, closing])
  }

  async * events (): AsyncGenerator<T> {
    for (;;) {
      const res = await this.#connect()
      if (res === undefined) return
      if (res === 'gone') {
        if (this.#source.gone !== undefined) yield this.#source.gone()
        return
      }
      this.#opened = true
      this.#failures = 0
      const finished: boolean = yield * this.#read(res)
      if (finished || !await pause(this.#retryMs, this.#signal)) return
    }
  }

  /** Opens the stream, retrying failures; `undefined` when aborted, `gone` when a reconnect finds a 404. */
  async #connect (): Promise<Dispatcher.ResponseData | 'gone' | undefined> {
    while (!aborted(this.#signal)) {
      try {
        return await this.#open()
      } catch (err) {
        if (aborted(this.#signal)) return undefined
        const status = err instanceof SessionStoreError ? err.status : undefined
        if (this.#opened && status === 404 && this.#source.gone !== undefined) return 'gone'
        if (status === undefined ? !isRetryableError(err) : !isRetryableStatus(status)) throw err
        this.#failures++
        if (!this.#opened && this.#failures > this.#retries) throw err
        const ms = this.#opened
          ? Math.min(MAX_RECONNECT_DELAY_MS, Math.max(this.#retryMs, MIN_RECONNECT_DELAY_MS) * 2 ** (this.#failures - 1))
          : retryDelay(this.#failures, this.#transport.retryDelayMs)
        if (!await pause(ms, this.#signal)) return undefined
      }
    }
    return undefined
  }

  /** One request; throws for an error answer or a body that is not an event stream. */
  async #open (): Promise<Dispatcher.ResponseData> {
    const path = this.#source.path()
    const headers = { accept: 'text/event-stream', ...this.#source.headers() }
    const res = await this.#transport.open(path, headers, STREAM_IDLE_MS, this.#signal)
    if (res.statusCode !== 200) throw await failure(res, path)
    if (!String(res.headers['content-type']).startsWith('text/event-stream')) {
      res.body.destroy()
      throw new TypeError(`GET ${path} did not answer an event stream`)
    }
    return res
  }

  /** Yields the decoded events of one response; returns true when the iteration is over for good. */
  async * #read (res: Dispatcher.ResponseData): AsyncGenerator<T, boolean> {
    const parser = new SseParser()
    try {
      for await (const chunk of res.body) {
        for (const message of parser.push(chunk as Buffer)) {
          const decoded = this.#source.decode(message)
          if (decoded?.value !== undefined) yield decoded.value
          if (decoded?.done === true) return true
        }
      }
    } catch (err) {
      if (!aborted(this.#signal) && !isRetryableError(err)) throw err
    } finally {
      res.body.destroy()
      this.#retryMs = parser.retry ?? this.#retryMs
    }
    return aborted(this.#signal)
  }
}
