/**
 * Live streams end when their token stops being valid: when a reload of the token file (SIGHUP,
 * or `DELETE /v1/tokens/{id}`) drops or changes it, and when it expires. A stream that is
 * already streaming is ended cleanly (its client may reconnect and will get the 401); one that
 * is still being set up has its socket destroyed, so it never starts.
 */
import type { ServerResponse } from 'node:http'
import type { Principal } from '../auth/tokens.js'

/** Longest `setTimeout` delay Node accepts (about 24.8 days); later expiries are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1

interface Stream {
  principal: Principal
  res: ServerResponse
  timer?: NodeJS.Timeout
}

/** The live streams opened with a token, checked against `stillValid`. */
export class StreamRevocation {
  readonly #streams = new Set<Stream>()
  readonly #stillValid: (principal: Principal) => boolean
  readonly #onEnd: (principal: Principal) => void

  /** `onEnd` is told of every stream ended here (for the log). */
  constructor (stillValid: (principal: Principal) => boolean, onEnd: (principal: Principal) => void) {
    this.#stillValid = stillValid
    this.#onEnd = onEnd
  }

  /** Streams tracked now. */
  get size (): number { return this.#streams.size }

  /** Tracks the stream on `res` until it closes. */
  track (principal: Principal, res: ServerResponse): void {
    const stream: Stream = { principal, res }
    this.#streams.add(stream)
    this.#arm(stream)
    res.once('close', () => {
      clearTimeout(stream.timer)
      this.#streams.delete(stream)
    })
  }

  /** Ends every tracked stream whose token is no longer valid; returns how many. */
  sweep (): number {
    let ended = 0
    for (const stream of [...this.#streams]) {
      if (this.#stillValid(stream.principal)) continue
      this.#end(stream)
      ended++
    }
    return ended
  }

  #arm (stream: Stream): void {
    const { expiresAt } = stream.principal
    if (expiresAt === undefined) return
    const delay = Math.max(0, Math.min(expiresAt - Date.now(), MAX_TIMER_MS))
    stream.timer = setTimeout(() => {
      if (this.#stillValid(stream.principal)) this.#arm(stream)
      else this.#end(stream)
    }, delay)
    stream.timer.unref()
  }

  #end (stream: Stream): void {
    clearTimeout(stream.timer)
    this.#streams.delete(stream)
    this.#onEnd(stream.principal)
    if (stream.res.headersSent) stream.res.end()
    else stream.res.destroy()
  }
}
