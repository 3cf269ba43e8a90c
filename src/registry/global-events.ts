/**
 * The recent lifecycle events of a registry, for `GET /v1/events` resumes (API.md "Live stream
 * (SSE)"): each event gets an id `<registry boot id>-<number>`, and the newest `capacity` are
 * held, so that a dashboard reconnecting with `Last-Event-ID` gets what it missed. An id from
 * another process, one no longer held, or one older than an event that was not recorded cannot
 * resume: the stream starts with a `reset` instead.
 *
 * Events are recorded while a dashboard listens and for `windowMs` after the last one left; the
 * listing view of an append costs date formatting, so outside that window appends are only
 * counted (which makes older ids unresumable).
 */
import type { GlobalEvent, SessionInfoView } from './types.js'

export class GlobalEventLog {
  readonly #boot: string
  readonly #capacity: number
  readonly #windowMs: number
  /** Number of the newest event, recorded or not. */
  #last = 0
  /** The held events, oldest first, numbered `#last - held.length + 1 … #last`. */
  #held: GlobalEvent[] = []
  #listeners = 0
  #recordUntil = 0

  constructor (boot: string, capacity: number, windowMs: number) {
    this.#boot = boot
    this.#capacity = Math.max(0, capacity)
    this.#windowMs = windowMs
  }

  /** The id of the newest event: a `reset` carries it, so a client resumes from there. */
  get lastId (): string { return this.#idOf(this.#last) }

  /** True when an event now would be recorded (and so is worth building). */
  get recording (): boolean {
    return this.#capacity > 0 && (this.#listeners > 0 || Date.now() < this.#recordUntil)
  }

  /** Counts a listener in for `recording`; returns its leave function. */
  join (): () => void {
    this.#listeners++
    let left = false
    return () => {
      if (left) return
      left = true
      if (--this.#listeners === 0) this.#recordUntil = Date.now() + this.#windowMs
    }
  }

  /** Numbers and holds the event; returns it with its id. */
  record (type: GlobalEvent['type'], info: SessionInfoView): GlobalEvent {
    const event: GlobalEvent = { type, info, id: this.#idOf(++this.#last) }
    if (!this.recording) {
      this.#held = []
      return event
    }
    this.#held.push(event)
    if (this.#held.length > this.#capacity) this.#held.splice(0, this.#held.length - this.#capacity)
    return event
  }

  /** An event that nobody records happened: no id before it can resume. */
  skip (): void {
    this.#last++
    if (this.#held.length > 0) this.#held = []
  }

  /** The held events after `lastEventId`, or `undefined` when it cannot be resumed from. */
  since (lastEventId: string): GlobalEvent[] | undefined {
    const dash = lastEventId.lastIndexOf('-')
    if (dash === -1 || lastEventId.slice(0, dash) !== this.#boot) return undefined
    const digits = lastEventId.slice(dash + 1)
    if (!/^\d{1,15}$/.test(digits)) return undefined
    const n = Number(digits)
    const oldestResumable = this.#last - this.#held.length
    if (n < oldestResumable || n > this.#last) return undefined
    return this.#held.slice(this.#held.length - (this.#last - n))
  }

  #idOf (n: number): string { return `${this.#boot}-${n}` }
}
