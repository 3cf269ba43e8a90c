/**
 * Server-Sent Events: the one encoder of the app (STYLE.md §12) and the connection that writes
 * it. A connection hijacks the reply, sends `retry` first and keeps a heartbeat comment going
 * while idle. Writers wait for `drain` when the socket pushes back; a subscriber that leaves its
 * buffer full for too long, or whose backlog passes a hard limit, is disconnected rather than
 * buffered without bound (API.md "Live stream": it resumes with Last-Event-ID).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { bodyOutput, type BodyOutput } from './chunked-body.js'
import { logCompleted } from './request-log.js'

const LINE_BREAK = /\r\n|\r|\n/

/** One event. `id` is omitted for events that must not move the client's Last-Event-ID. */
export function encodeSse (event: string, id: string | undefined, data: string): string {
  if (LINE_BREAK.test(event) || (id !== undefined && LINE_BREAK.test(id))) {
    throw new TypeError('SSE event and id must be single-line')
  }
  const body = data.split(LINE_BREAK).map((line) => `data: ${line}`).join('\n')
  return id === undefined ? `event: ${event}\n${body}\n\n` : `event: ${event}\nid: ${id}\n${body}\n\n`
}

/** A comment line, ignored by clients; keeps proxies from closing an idle stream. */
export function encodeComment (text: string): string {
  if (LINE_BREAK.test(text)) throw new TypeError('SSE comment must be single-line')
  return `: ${text}\n\n`
}

/** The reconnection delay the client should use, in ms. */
export function encodeRetry (ms: number): string {
  return `retry: ${Math.max(0, Math.trunc(ms))}\n\n`
}

/** The headers set on the reply so far, without unset ones (`writeHead` refuses `undefined`). */
function definedHeaders (headers: Record<string, number | string | string[] | undefined>): Record<string, number | string | string[]> {
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, number | string | string[]] => entry[1] !== undefined))
}

export interface SseOptions {
  /**
   * A `: ping` comment is written once there was no output for half of this many ms, checked
   * every half: a stream is never silent for this long.
   */
  heartbeatMs: number
  /**
   * A write attempted while more than this many bytes from earlier writes wait unsent cuts the
   * subscriber off. One large event alone never does: the limit is on the backlog behind it.
   */
  maxBufferedBytes: number
  /** A subscriber whose full buffer does not drain within this many ms is cut off. */
  drainTimeoutMs: number
  /** Reconnection delay announced first (default 1000). */
  retryMs?: number
}

export type WakeReason = 'wake' | 'closed'

/**
 * Connections woken per event-loop turn. An append wakes every subscriber of its session; waking
 * them a slice at a time lets the loop answer requests and start the next append's write and
 * sync between slices, instead of after the whole fan-out. A subscriber whose turn comes late
 * finds more entries and sends them in one write.
 *
 * The first slice does not wait for a turn: it runs as soon as the code that woke it is done (a
 * microtask). An append wakes its subscribers when its sync completes, and the loop then still
 * has the rest of that turn's I/O to handle (the answers of every append that shared the sync,
 * requests that arrived meanwhile) before its next turn; the first subscribers get the entry
 * ahead of all that, and the later slices follow one per turn.
 */
const WAKE_SLICE = 100

/** Connections whose wake-up is due, in the order they were woken. */
let dueWakes: SseConnection[] = []
/** A slice is queued (a microtask for the first, then one per event-loop turn). */
let wakesScheduled = false

function wakeSlice (): void {
  const slice = dueWakes.length <= WAKE_SLICE ? dueWakes : dueWakes.slice(0, WAKE_SLICE)
  dueWakes = slice === dueWakes ? [] : dueWakes.slice(WAKE_SLICE)
  for (const conn of slice) conn.wakeNow()
  if (dueWakes.length > 0) setImmediate(wakeSlice)
  else wakesScheduled = false
}

/**
 * A live `text/event-stream` response. `send` never blocks: the caller reads by cursor, so a
 * subscriber cut off for being slow loses nothing and resumes where it stopped.
 */
export class SseConnection {
  readonly #req: FastifyRequest
  readonly #reply: FastifyReply
  readonly #options: SseOptions
  readonly #onClose: Array<() => void> = []
  readonly #closeWaiters = new Set<() => void>()
  readonly #heartbeat: NodeJS.Timeout
  readonly #out: BodyOutput
  /**
   * Something was written since the heartbeat last looked. A flag rather than a timer re-armed
   * per write: an append's fan-out writes to every subscriber, and re-arming costs each write a
   * clock read and a timer list update.
   */
  #wrote = false
  #closed = false
  #dirty = false
  #wakeDue = false
  #ending = false
  #wake: ((reason: WakeReason) => void) | undefined
  #onWake: (() => boolean) | undefined

  constructor (req: FastifyRequest, reply: FastifyReply, options: SseOptions) {
    this.#req = req
    this.#reply = reply
    this.#options = options
    reply.hijack()
    const raw = reply.raw
    raw.writeHead(200, {
      // Headers hooks set before the handler (CORS, rate limit) go out with the stream's own.
      ...definedHeaders(reply.getHeaders()),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-content-type-options': 'nosniff',
      'x-accel-buffering': 'no',
    })
    raw.flushHeaders()
    this.#out = bodyOutput(raw)
    this.#heartbeat = setInterval(() => { this.#beat() }, Math.max(1, options.heartbeatMs / 2))
    // The response's `close` fires when the client goes away (the request's may fire as soon as
    // its body has been read, which for a stream means nothing).
    const closed = (): void => { this.#finish() }
    raw.on('close', closed)
    raw.on('error', closed)
    if (req.raw.socket?.destroyed === true) this.#finish()
    this.send(encodeRetry(options.retryMs ?? 1000))
  }

  get closed (): boolean { return this.#closed }

  /** Runs `fn` once when the stream ends, however it ends. */
  onClose (fn: () => void): void {
    if (this.#closed) fn()
    else this.#onClose.push(fn)
  }

  /**
   * Writes encoded events (text, or UTF-8 bytes that may be shared with other connections and
   * are never modified). True when the socket wants more; false when it pushes back (call
   * `drain()` before writing again) or the stream is closed. Writing while the socket already
   * holds more than `maxBufferedBytes` unsent disconnects the subscriber instead.
   */
  send (text: string | Buffer): boolean {
    if (this.#closed) return false
    if (text.length === 0) return true // an empty chunk would end the body
    const out = this.#out.stream
    if (out.writableNeedDrain && out.writableLength > this.#options.maxBufferedBytes) {
      this.#cut('backlog over the limit')
      return false
    }
    this.#wrote = true
    return out.write(this.#out.encode(text))
  }

  /**
   * Resolves true once the socket wants data again, false when the stream closed, including
   * when the subscriber did not drain within `drainTimeoutMs` (it is then disconnected).
   */
  async drain (): Promise<boolean> {
    const out = this.#out.stream
    if (this.#closed) return false
    if (!out.writableNeedDrain) return true
    return await new Promise<boolean>((resolve) => {
      const done = (drained: boolean): void => {
        clearTimeout(timer)
        out.off('drain', onDrain)
        this.#closeWaiters.delete(onClose)
        resolve(drained && !this.#closed)
      }
      const onDrain = (): void => { done(true) }
      const onClose = (): void => { done(false) }
      const timer = setTimeout(() => {
        this.#cut('buffer not drained in time')
        done(false)
      }, this.#options.drainTimeoutMs)
      out.on('drain', onDrain)
      this.#closeWaiters.add(onClose)
    })
  }

  /**
   * Wakes `nextWake` soon: once the running code is done, together with the other connections
   * woken meanwhile, a slice at a time (`WAKE_SLICE`: the first at once, the next ones on the
   * following turns of the event loop). Waking twice before that counts once; a wake-up with
   * nobody waiting is remembered for the next call.
   */
  wake (): void {
    if (this.#wakeDue || this.#closed) return
    this.#wakeDue = true
    dueWakes.push(this)
    if (!wakesScheduled) {
      wakesScheduled = true
      queueMicrotask(wakeSlice)
    }
  }

  /**
   * `wake` at once. While `nextWake` is pending, the `onWake` handler runs first, right here;
   * `nextWake` resolves only when there is none or it did not handle the wake-up.
   */
  wakeNow (): void {
    this.#wakeDue = false
    const resolve = this.#wake
    if (resolve === undefined) {
      this.#dirty = true
      return
    }
    if (this.#handled() || this.#wake === undefined) return // handled, or closed meanwhile
    this.#wake = undefined
    resolve('wake')
  }

  /**
   * Lets a writer that waits in `nextWake` handle wake-ups synchronously: `fn` returns true when
   * it did everything the wake-up called for, false (or throws) to have `nextWake` resolve.
   * An append's fan-out then costs each subscriber a call, not a promise and a turn of the
   * microtask queue.
   */
  onWake (fn: () => boolean): void {
    this.#onWake = fn
  }

  #handled (): boolean {
    try {
      return this.#onWake?.() === true
    } catch {
      return false // `nextWake` resolves and the writer meets the error itself
    }
  }

  /** Resolves on the next `wake()` (at once when one happened since the last call) or on close. */
  async nextWake (): Promise<WakeReason> {
    if (this.#closed) return 'closed'
    if (this.#dirty) {
      this.#dirty = false
      return 'wake'
    }
    return await new Promise<WakeReason>((resolve) => { this.#wake = resolve })
  }

  /** Ends the response gracefully. */
  end (): void {
    if (this.#closed) return
    this.#ending = true // the response finishes: Fastify logs its line
    this.#reply.raw.end()
    this.#finish()
  }

  #cut (reason: string): void {
    if (this.#closed) return
    this.#reply.log.info({ buffered: this.#out.stream.writableLength, reason }, 'slow SSE subscriber disconnected')
    this.#reply.raw.destroy()
    this.#finish()
  }

  /** Every half heartbeat: a ping when nothing was written since the last look. */
  #beat (): void {
    if (this.#closed) return
    if (this.#wrote) this.#wrote = false
    else this.send(encodeComment('ping'))
  }

  #finish (): void {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#heartbeat)
    if (!this.#ending) logCompleted(this.#req, this.#reply) // the client left or was cut off
    const resolve = this.#wake
    this.#wake = undefined
    resolve?.('closed')
    for (const fn of [...this.#closeWaiters]) fn()
    for (const fn of this.#onClose.splice(0)) fn()
  }
}
