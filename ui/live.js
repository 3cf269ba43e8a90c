// A live stream with automatic resume. EventSource reconnects by itself after a dropped
// connection and sends Last-Event-ID; when it gives up (an answer that is not a stream: 401,
// 404, 429…) we ask `probe` why, and either report it or open a new stream after the last id.
import { streamUrl } from './api.js'

const indicator = () => document.getElementById('live')

/** Shows `state` (`live`, `reconnecting`, `offline`, `idle`) in the header. */
export function showLiveState (state) {
  const el = indicator()
  if (el === null) return
  el.dataset.state = state
  el.textContent = state
  el.title = { live: 'Receiving changes as they happen', reconnecting: 'Connection lost: reconnecting', offline: 'Not connected', idle: '' }[state] ?? ''
}

const RETRY_MS = 2000

export class LiveStream {
  /**
   * @param path the stream's path
   * @param query its query (`after` is replaced by the last event id on a manual reconnect)
   * @param handlers event type → function(data, id)
   * @param options.probe async () => void: throws the ApiError explaining a refused stream
   * @param options.onRefused (error) => void: the probe found a reason not to retry
   * @param options.onOpen () => void, on every (re)connection
   */
  constructor (path, query, handlers, { probe, onRefused, onOpen }) {
    Object.assign(this, { path, query, handlers, probe, onRefused, onOpen })
    this.lastId = undefined
    this.closed = false
    this.timer = undefined
    this.#connect()
  }

  #connect () {
    const query = this.lastId === undefined ? this.query : { ...this.query, after: this.lastId }
    const source = this.source = new EventSource(streamUrl(this.path, query))
    source.onopen = () => {
      showLiveState('live')
      this.onOpen?.()
    }
    source.onerror = () => {
      if (this.closed) return
      showLiveState('reconnecting')
      if (source.readyState === EventSource.CLOSED) void this.#refused()
    }
    for (const [type, handler] of Object.entries(this.handlers)) {
      source.addEventListener(type, (event) => {
        if (event.lastEventId !== '') this.lastId = event.lastEventId
        handler(JSON.parse(event.data), event.lastEventId)
      })
    }
  }

  async #refused () {
    try {
      await this.probe()
    } catch (err) {
      if (err.status === 401 || err.status === 403 || err.status === 404) {
        this.close()
        showLiveState('offline')
        this.onRefused(err)
        return
      }
    }
    if (!this.closed) this.timer = setTimeout(() => { if (!this.closed) this.#connect() }, RETRY_MS)
  }

  close () {
    this.closed = true
    clearTimeout(this.timer)
    this.source?.close()
  }
}
