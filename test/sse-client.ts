/**
 * A minimal SSE client over undici for the socket tests: parses events as they arrive and
 * lets a test wait for a condition. Parsing follows the EventSource rules the server relies on
 * (`data:` lines joined by LF, `id:` sticky, an incomplete last event ignored).
 */
import { request, type Dispatcher } from 'undici'

export interface SseEvent { event: string, id: string | undefined, data: string }

export class SseClient {
  readonly events: SseEvent[] = []
  readonly comments: string[] = []
  retry: number | undefined
  statusCode = 0
  headers: Record<string, string | string[] | undefined> = {}
  ended = false
  /** Last `id:` seen on a complete event, as EventSource tracks it. */
  lastEventId: string | undefined
  #buffer = ''
  #controller = new AbortController()
  #waiters = new Set<() => void>()

  static async connect (url: string, headers: Record<string, string> = {}, dispatcher?: Dispatcher): Promise<SseClient> {
    const client = new SseClient()
    const signal = client.#controller.signal
    const res = await request(url, { headers: { accept: 'text/event-stream', ...headers }, signal, ...(dispatcher === undefined ? {} : { dispatcher }) })
    client.statusCode = res.statusCode
    client.headers = res.headers
    res.body.setEncoding('utf8')
    res.body.on('data', (chunk: string) => { client.#feed(chunk) })
    const done = (): void => { client.ended = true; client.#notify() }
    res.body.on('end', done)
    res.body.on('error', done)
    res.body.on('close', done)
    return client
  }

  /** Entry events as `seq` numbers. */
  get seqs (): number[] { return this.events.filter((e) => e.event === 'entry').map((e) => Number(e.id)) }

  async waitFor (condition: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out; ${this.events.length} events, ended=${String(this.ended)}`)
      await new Promise<void>((resolve) => {
        const wake = (): void => { this.#waiters.delete(wake); resolve() }
        this.#waiters.add(wake)
        setTimeout(wake, 25)
      })
    }
  }

  close (): void { this.#controller.abort() }

  #notify (): void { for (const wake of [...this.#waiters]) wake() }

  #feed (chunk: string): void {
    this.#buffer += chunk
    for (let end = this.#buffer.indexOf('\n\n'); end !== -1; end = this.#buffer.indexOf('\n\n')) {
      this.#dispatch(this.#buffer.slice(0, end))
      this.#buffer = this.#buffer.slice(end + 2)
    }
    this.#notify()
  }

  #dispatch (block: string): void {
    let event = 'message'
    let id: string | undefined
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) { this.comments.push(line.slice(1).trim()); continue }
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') event = value
      else if (field === 'id') id = value
      else if (field === 'data') data.push(value)
      else if (field === 'retry') this.retry = Number(value)
    }
    if (id !== undefined) this.lastEventId = id
    if (data.length > 0) this.events.push({ event, id, data: data.join('\n') })
  }
}
