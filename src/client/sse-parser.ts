/**
 * A parser for the `text/event-stream` wire format, as the HTML standard's EventSource reads it
 * ("Parsing an event stream"). Chunks may split the stream anywhere: inside a UTF-8 character,
 * inside a line, between the CR and LF of a line break, or between two events.
 */

/** One dispatched event. `data` lines are joined with LF; `event` defaults to `message`. */
export interface SseMessage {
  event: string
  data: string
  /** The last event id seen so far on this stream (ids are sticky), if any. */
  id: string | undefined
}

export class SseParser {
  readonly #decoder = new TextDecoder('utf-8')
  #pending = ''
  /** A chunk ended in CR: an LF at the start of the next one belongs to the same line break. */
  #skipLf = false
  /** Nothing decoded yet: a leading BOM is dropped. */
  #atStart = true
  #event = ''
  #data: string[] = []
  #lastId: string | undefined
  #retry: number | undefined

  /** The last valid `retry:` value in ms, if one arrived. */
  get retry (): number | undefined { return this.#retry }

  /** The last `id:` value seen (the stream's last event id). */
  get lastEventId (): string | undefined { return this.#lastId }

  /** Feeds one chunk; returns the events it completed, in order. */
  push (chunk: Uint8Array | string): SseMessage[] {
    let text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true })
    if (this.#atStart && text.length > 0) {
      if (text.startsWith('\uFEFF')) text = text.slice(1)
      this.#atStart = false
    }
    if (this.#skipLf && text.length > 0) {
      if (text.startsWith('\n')) text = text.slice(1)
      this.#skipLf = false
    }
    const out: SseMessage[] = []
    let start = 0
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c !== 10 && c !== 13) continue
      this.#line(this.#pending + text.slice(start, i), out)
      this.#pending = ''
      if (c === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++
        } else {
          this.#skipLf = true
        }
      }
      start = i + 1
    }
    this.#pending += text.slice(start)
    return out
  }

  /** The stream ended: an event without its closing blank line is dropped, as the standard says. */
  end (): void {
    this.#pending = ''
    this.#event = ''
    this.#data = []
  }

  #line (line: string, out: SseMessage[]): void {
    if (line === '') {
      this.#dispatch(out)
      return
    }
    if (line.startsWith(':')) return // comment (e.g. `: ping`)
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    switch (field) {
      case 'event': this.#event = value; break
      case 'data': this.#data.push(value); break
      case 'id': if (!value.includes('\0')) this.#lastId = value; break
      case 'retry': if (/^\d+$/.test(value)) this.#retry = Number(value); break
      default: break // unknown fields are ignored
    }
  }

  #dispatch (out: SseMessage[]): void {
    if (this.#data.length > 0) {
      out.push({ event: this.#event === '' ? 'message' : this.#event, data: this.#data.join('\n'), id: this.#lastId })
    }
    this.#event = ''
    this.#data = []
  }
}
