/**
 * The two live streams of API.md: one session's entries and changes, and every session's
 * lifecycle. Both reconnect on their own (event-stream.ts).
 */
import { reconnecting } from './event-stream.js'
import type { SseMessage } from './sse-parser.js'
import { withQuery, type Transport } from './transport.js'
import type { BlobMode, Entry, Session, SessionInfo } from './types.js'

/** An event of `GET /v1/sessions/{id}/events`. */
export type SessionStreamEvent =
  /** An entry, in seq order; `seq` is its 1-based position among the session's entries. */
  | { type: 'entry', seq: number, entry: Entry }
  /** The leaf moved without an append. */
  | { type: 'leaf', leafId: string | null }
  /** The header changed (title, move). */
  | { type: 'session', session: Session }
  /** The session was deleted; always the last event. */
  | { type: 'deleted', id: string }

/**
 * An event of `GET /v1/events`. A reconnect resumes after the last event received; `reset`
 * means the server no longer held it, so events may have been missed: reload the list.
 */
export type GlobalStreamEvent =
  | { type: 'session-created' | 'session-updated' | 'session-deleted', info: SessionInfo }
  | { type: 'reset' }

export interface SubscribeOptions {
  /** Start after this seq (default 0: from the first entry). */
  after?: number
  /** Ends the iteration, without an error, when aborted. */
  signal?: AbortSignal
  /** `ref` keeps image data as blob refs (default `inline`). */
  blobs?: BlobMode
}

const GLOBAL_TYPES: ReadonlySet<string> = new Set(['session-created', 'session-updated', 'session-deleted'])

/** Path segment: ids are encoded, never joined raw. */
export const seg = (value: string): string => encodeURIComponent(value)

function parseSeq (message: SseMessage): number {
  const seq = Number(message.id)
  if (message.id === undefined || !Number.isSafeInteger(seq) || seq < 1) {
    throw new TypeError(`entry event with an invalid id: ${String(message.id)}`)
  }
  return seq
}

/**
 * Every entry of the session after `after`, then live appends, leaf moves and header changes;
 * ends after `deleted`. A session found deleted on a reconnect yields a final `deleted`.
 */
export function sessionEvents (transport: Transport, retries: number, sessionId: string, options: SubscribeOptions = {}): AsyncGenerator<SessionStreamEvent> {
  let lastSeq = options.after ?? 0
  const path = withQuery(`/v1/sessions/${seg(sessionId)}/events`, { blobs: options.blobs })
  return reconnecting<SessionStreamEvent>(transport, retries, {
    path: () => path,
    headers: (): Record<string, string> => (lastSeq > 0 ? { 'last-event-id': String(lastSeq) } : {}),
    decode: (message) => {
      switch (message.event) {
        case 'entry': {
          const seq = parseSeq(message)
          if (seq <= lastSeq) return undefined // already yielded before a reconnect
          lastSeq = seq
          return { value: { type: 'entry', seq, entry: JSON.parse(message.data) as Entry } }
        }
        case 'leaf': {
          const { leafId } = JSON.parse(message.data) as { leafId: string | null }
          return { value: { type: 'leaf', leafId } }
        }
        case 'session': return { value: { type: 'session', session: JSON.parse(message.data) as Session } }
        case 'deleted': {
          const { id } = JSON.parse(message.data) as { id?: string }
          return { value: { type: 'deleted', id: id ?? sessionId }, done: true }
        }
        default: return undefined // event types of later versions
      }
    },
    gone: () => ({ type: 'deleted', id: sessionId }),
  }, options.signal)
}

/**
 * Lifecycle events of every session, live from the moment of connecting; a reconnect sends
 * `Last-Event-ID` and resumes after the last event yielded (or yields `reset`).
 */
export function globalEvents (transport: Transport, retries: number, options: { signal?: AbortSignal } = {}): AsyncGenerator<GlobalStreamEvent> {
  let lastId: string | undefined
  return reconnecting<GlobalStreamEvent>(transport, retries, {
    path: () => '/v1/events',
    headers: (): Record<string, string> => (lastId === undefined ? {} : { 'last-event-id': lastId }),
    decode: (message) => {
      if (message.event === 'reset') {
        lastId = message.id ?? lastId
        return { value: { type: 'reset' } }
      }
      if (!GLOBAL_TYPES.has(message.event)) return undefined
      lastId = message.id ?? lastId
      const type = message.event as 'session-created' | 'session-updated' | 'session-deleted'
      return { value: { type, info: JSON.parse(message.data) as SessionInfo } }
    },
  }, options.signal)
}
