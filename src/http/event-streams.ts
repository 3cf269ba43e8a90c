/**
 * The two live streams of API.md "Live stream". A session stream reads entries by seq in a
 * loop; registry notifications only wake the loop (STYLE.md §11), so a missed wake-up costs
 * latency, never a gap, and the advancing cursor rules out duplicates.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { hasCode, Validation } from '../errors.js'
import { applyBlobMode } from '../registry/blob-refs.js'
import type { BlobMode, GlobalEvent, SessionEvent, SessionRegistry } from '../registry/session-registry.js'
import type { SessionEntryBase } from '../session/types.js'
import { FrameCache, joinFrames } from './frame-cache.js'
import { encodeSse, SseConnection } from './sse.js'
import { stringifyJson } from '../session/json-text.js'

/** Entries read per pass of the loop. */
const READ_BATCH = 500

/** Frames are joined into writes of at most this many bytes (fewer syscalls on catch-up). */
const WRITE_BYTES = 32 * 1024

/** Where a stream starts: `Last-Event-ID` wins over `?after=`, else before the first entry. */
export function resumeAfter (lastEventId: string | undefined, after: number | undefined): number {
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    const id = lastEventId.trim()
    if (!/^\d{1,15}$/.test(id)) throw new Validation('Last-Event-ID must be a seq (a non-negative integer)')
    return Number(id)
  }
  return after ?? 0
}

/** Live connections, ended together when the app closes. */
export type StreamSet = Set<SseConnection>

function open (registry: SessionRegistry, streams: StreamSet, req: FastifyRequest, reply: FastifyReply): SseConnection {
  const conn = new SseConnection(req, reply, registry.streamOptions)
  streams.add(conn)
  conn.onClose(() => { streams.delete(conn) })
  conn.onClose(registry.onShutdown(() => { conn.end() }))
  return conn
}

/**
 * `GET /v1/sessions/{id}/events`: subscribes first (an unknown session is a 404 before the
 * stream starts), then streams in the background.
 */
export async function streamSession (
  registry: SessionRegistry, streams: StreamSet, req: FastifyRequest, reply: FastifyReply,
  id: string, after: number, blobs: BlobMode | undefined
): Promise<void> {
  const events: SessionEvent[] = []
  let conn: SseConnection | undefined
  const unsubscribe = await registry.subscribe(id, (event) => {
    if (event.type !== 'append') events.push(event)
    conn?.wake()
  })
  conn = open(registry, streams, req, reply)
  conn.onClose(unsubscribe)
  pumpSession(registry, conn, id, after, blobs, events).catch((err: unknown) => {
    req.log.error({ err, sessionId: id }, 'session stream failed')
    conn?.end()
  })
}

/**
 * What a pass left to do: nothing until the next wake-up (`idle`), another pass at once
 * (`more`: it wrote a full batch), wait for the socket (`drain`), load the session (`load`),
 * or nothing ever (`end`: the stream ended).
 */
type PassOutcome = 'idle' | 'more' | 'drain' | 'load' | 'end'

/**
 * Streams the session from `after` on. Each pass writes the entries visible after the cursor,
 * then the queued events. A wake-up runs the pass synchronously from the connection's wake
 * slice when the stream was idle (`SseConnection.onWake`), so an append reaches every caught-up
 * subscriber without a promise each; the loop below does the waiting (socket, load).
 */
async function pumpSession (
  registry: SessionRegistry, conn: SseConnection, id: string, after: number,
  blobs: BlobMode | undefined, events: SessionEvent[]
): Promise<void> {
  let cursor = after
  /** One pass over `batch` (default: read now). `gone`: the session was deleted. */
  const pass = (batch = registry.readVisibleNow(id, cursor, READ_BATCH), gone = false): PassOutcome => {
    if (batch === undefined) return 'load'
    // Frames are joined into writes of at most WRITE_BYTES (a larger frame goes alone), so the
    // backlog limit still applies at about event granularity. Subscribers reading the same run
    // write the same joined Buffer. The cursor moves past what was written only.
    let run: Buffer[] = []
    let bytes = 0
    let next = cursor
    for (const entry of batch) {
      const frame = entryFrame(entry, next + 1, blobs)
      if (bytes !== 0 && bytes + frame.length > WRITE_BYTES) {
        const accepted = conn.send(joinFrames(run))
        cursor = next
        if (!accepted) return conn.closed ? 'end' : 'drain'
        run = []
        bytes = 0
      }
      run.push(frame)
      bytes += frame.length
      next++
    }
    let accepted = true
    if (bytes !== 0) {
      accepted = conn.send(joinFrames(run))
      cursor = next
    }
    for (let event = events.shift(); event !== undefined; event = events.shift()) {
      accepted = conn.send(encodeSessionEvent(event)) && accepted
      if (event.type === 'deleted') gone = true
    }
    if (gone) conn.end()
    if (conn.closed) return 'end'
    if (!accepted) return 'drain'
    // A short batch was everything visible when it was read; anything since then wakes us.
    return batch.length === READ_BATCH ? 'more' : 'idle'
  }
  conn.onWake(() => pass() === 'idle')
  let outcome = pass()
  for (;;) {
    if (outcome === 'end') return
    if (outcome === 'idle' && await conn.nextWake() === 'closed') return
    if (outcome === 'drain' && !await conn.drain()) return
    if (outcome === 'load') {
      const batch = await loadVisible(registry, conn, id, cursor)
      if (batch === 'closed') return
      outcome = batch === undefined ? pass([], true) : pass(batch)
    } else outcome = pass()
  }
}

/** The first wait before loading a session again whose storage failed, doubled up to `LOAD_RETRY_MAX_MS`. */
const LOAD_RETRY_MS = 100
const LOAD_RETRY_MAX_MS = 2000

/**
 * `readVisible` for a stream whose session is not loaded: undefined when it was deleted (its
 * `deleted` event is queued). While the storage fails (the database is away), the stream stays
 * open and tries again, more and more slowly, until it loads or the subscriber leaves
 * (`'closed'`); the entries appended meanwhile then follow its cursor, none skipped.
 */
async function loadVisible (registry: SessionRegistry, conn: SseConnection, id: string, cursor: number): Promise<SessionEntryBase[] | undefined | 'closed'> {
  for (let wait = LOAD_RETRY_MS; ; wait = Math.min(wait * 2, LOAD_RETRY_MAX_MS)) {
    try {
      return await registry.readVisible(id, cursor, READ_BATCH)
    } catch (err) {
      if (hasCode(err, 'SS_SESSION_NOT_FOUND')) return undefined
    }
    await sleep(wait)
    if (conn.closed) return 'closed'
  }
}

/** Frames shared by subscribers: 1 MiB holds the newest ~900 frames of 1 KB entries. */
const frames = new FrameCache(1024 * 1024, 4096)

/**
 * The `entry` frame of `entry` at `seq`, UTF-8 encoded; the default (`inline`) view is encoded
 * once for everyone and the same Buffer is written to every subscriber.
 */
export function entryFrame (entry: object, seq: number, blobs: BlobMode | undefined): Buffer {
  const encode = (): string => encodeSse('entry', String(seq), stringifyJson(applyBlobMode(entry, blobs)) ?? 'null')
  return blobs === 'ref' ? Buffer.from(encode(), 'utf8') : frames.get(entry, seq, encode)
}

function encodeSessionEvent (event: SessionEvent): string {
  switch (event.type) {
    case 'append': return '' // never queued: appends only wake the loop
    case 'leaf': return encodeSse('leaf', undefined, JSON.stringify({ leafId: event.leafId }))
    case 'session': return encodeSse('session', undefined, stringifyJson(event.session) ?? 'null')
    case 'deleted': return encodeSse('deleted', undefined, JSON.stringify({ id: event.id }))
  }
}

/**
 * `GET /v1/events`: `session-created/updated/deleted` with a SessionInfo, for dashboards. With
 * `lastEventId` the held events after it come first, or a `reset` (with the newest id) when the
 * registry no longer holds it. Subscribing and reading the backlog happen in one tick, so
 * nothing falls between them.
 */
export function streamGlobal (
  registry: SessionRegistry, streams: StreamSet, req: FastifyRequest, reply: FastifyReply, lastEventId: string | undefined
): void {
  const queue: GlobalEvent[] = []
  const conn = open(registry, streams, req, reply)
  conn.onClose(registry.subscribeAll((event) => {
    queue.push(event)
    conn.wake()
  }))
  let first: string | undefined
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    const backlog = registry.globalEventsSince(lastEventId.trim())
    if (backlog === undefined) first = encodeSse('reset', registry.lastGlobalEventId, '{}')
    else queue.unshift(...backlog)
  }
  const pump = async (): Promise<void> => {
    if (first !== undefined && !conn.send(first) && !await conn.drain()) return
    while (!conn.closed) {
      for (let event = queue.shift(); event !== undefined; event = queue.shift()) {
        if (!conn.send(encodeSse(event.type, event.id, stringifyJson(event.info) ?? 'null')) && !await conn.drain()) return
      }
      if (await conn.nextWake() === 'closed') return
    }
  }
  pump().catch((err: unknown) => {
    req.log.error({ err }, 'event stream failed')
    conn.end()
  })
}
