/** Schemas of the live streams (API.md "Live stream (SSE)"). */
import { Type } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { BlobsQuery } from './entries.schema.js'
import { IdParams } from './sessions.schema.js'

const EventStream = (description: string) => ({
  description,
  content: { 'text/event-stream': { schema: Type.String() } },
})

export const SessionEvents = {
  operationId: 'subscribe',
  tags: ['events'],
  summary: "Live stream of one session's entries",
  description: '`event: entry` (`id` = seq, data = the entry) for every entry after `Last-Event-ID` or ' +
    '`?after=` (the header wins), then live appends; `leaf` when the leaf moves without an append; ' +
    '`session` when the header changes; `deleted`, then the stream ends. `: ping` while idle; `retry: 1000` ' +
    'first. A subscriber that cannot keep up is disconnected and resumes with Last-Event-ID.',
  params: IdParams,
  headers: Type.Object({
    'last-event-id': Type.Optional(Type.String({ pattern: '^\\s*[0-9]{0,15}\\s*$', description: 'The seq of the last entry received: a non-negative integer' })),
  }),
  querystring: Type.Object({
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Start after this seq (default 0); beyond 2^53 − 1 the answer is 400' })),
    blobs: BlobsQuery,
  }),
  response: { 200: EventStream('Server-Sent Events'), ...problemResponses(400, 404, 422, 507) },
}

export const GlobalEvents = {
  operationId: 'subscribeAll',
  tags: ['events'],
  summary: 'Live stream of session lifecycle events, for dashboards',
  description: '`session-created`, `session-updated` and `session-deleted`, each with a SessionInfo as data and ' +
    'an `id`. A reconnect with `Last-Event-ID` resumes after it while the server holds it; otherwise the ' +
    'stream starts with a `reset` event (data `{}`, the newest id): reload the list, then follow.',
  headers: Type.Object({
    'last-event-id': Type.Optional(Type.String({ description: 'The `id` of the last event received' })),
  }),
  response: { 200: EventStream('Server-Sent Events') },
}
