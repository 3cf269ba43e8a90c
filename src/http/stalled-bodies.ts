/**
 * Request bodies that stop coming. Node checks REQUEST_TIMEOUT_MS only for the request as a whole;
 * a body that arrives a byte at a time keeps its socket (and its descriptor) that long. Here every
 * request whose body is still arriving is watched by one sweep per app, on a timer of its own:
 * a body that brought fewer than `MIN_BODY_BYTES` in the last `stallMs` while the server was
 * reading it has stalled, and is handed to `onStall`. Progress is the socket's `bytesRead`, so
 * watching costs the request nothing on its way (no `data` listener, which would start the stream
 * before its parser listens). While the server is not reading (the body is buffered or paused by
 * backpressure, e.g. a blob written to a slow disk), the clock restarts: that wait is not the client's.
 * A request is taken into the sweep's set only when its body is still arriving at the end of the
 * turn it came in: most bodies come in the packet of their headers, and holding every request (its
 * socket, request and response) until the next sweep kept them alive past the young generation.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/** Bytes a body must bring per stall window; fewer (and not done) is a stall, whatever the pace. */
export const MIN_BODY_BYTES = 1024

interface Watched {
  req: IncomingMessage
  res: ServerResponse
  socket: Socket
  /** When the current window began (ms, `performance.now()`). */
  since: number
  /** `socket.bytesRead` then. */
  bytes: number
}

export interface StalledBodiesOptions {
  /** A body must bring `MIN_BODY_BYTES` (or end) within this many ms. */
  stallMs: number
  /** Called once per stalled request, after it stopped being watched. */
  onStall: (req: IncomingMessage, res: ServerResponse, socket: Socket) => void
}

export class StalledBodies {
  readonly #stallMs: number
  readonly #onStall: StalledBodiesOptions['onStall']
  readonly #watched = new Set<Watched>()
  /** Requests of this turn, looked at once it ends (`#settle`). */
  #fresh: Watched[] = []
  readonly #timer: NodeJS.Timeout

  constructor ({ stallMs, onStall }: StalledBodiesOptions) {
    this.#stallMs = stallMs
    this.#onStall = onStall
    // Four sweeps per window: a stall is seen at most a quarter window late (at most a second).
    this.#timer = setInterval(() => { this.sweep(performance.now()) }, Math.max(25, Math.min(1000, stallMs / 4))).unref()
  }

  /** Requests watched now. */
  get size (): number { return this.#watched.size + this.#fresh.length }

  /** Watches `req` until its body is complete, its socket closes or an answer starts. */
  watch (req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket
    if (this.#fresh.length === 0) setImmediate(this.#settle)
    this.#fresh.push({ req, res, socket, since: performance.now(), bytes: socket.bytesRead })
  }

  /** Keeps watching the requests of the turn that ended whose body is still arriving. */
  readonly #settle = (): void => {
    const fresh = this.#fresh
    this.#fresh = []
    for (const w of fresh) if (!done(w)) this.#watched.add(w)
  }

  /** One pass over the watched requests at time `now` (ms, `performance.now()`). */
  sweep (now: number): void {
    for (const w of this.#watched) {
      if (done(w)) {
        this.#watched.delete(w)
      } else if (w.req.readableFlowing !== true || w.req.readableLength > 0 || w.socket.bytesRead - w.bytes >= MIN_BODY_BYTES) {
        w.since = now
        w.bytes = w.socket.bytesRead
      } else if (now - w.since >= this.#stallMs) {
        this.#watched.delete(w)
        this.#onStall(w.req, w.res, w.socket)
      }
    }
  }

  close (): void {
    clearInterval(this.#timer)
    this.#watched.clear()
    this.#fresh = []
  }
}

/** The body arrived whole, the socket closed or the answer started: nothing left to watch. */
const done = (w: Watched): boolean => w.req.complete || w.socket.destroyed || w.res.headersSent
