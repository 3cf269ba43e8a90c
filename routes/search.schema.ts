/**
 * Schemas of `GET /v1/search` (README "Search", in API.md's terms): the query string, and the
 * named `SearchHit` and `SearchResults`.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { MAX_QUERY_CHARS } from '../src/search/query.js'
import { ref } from '../src/schemas/ref.js'
import { Cwd } from './sessions.schema.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

export const SearchHit = Type.Object({
  sessionId: Type.String(),
  entryId: Type.Union([Type.String(), Type.Null()], { description: 'The matching entry; `null` when the session title matches' }),
  type: Type.String({ description: 'The entry type (`message`, `custom_message`, `compaction`, `branch_summary`), or `session` for the title' }),
  role: Type.Union([Type.String(), Type.Null()], { description: 'The role of a `message` entry, else `null`' }),
  timestamp: Type.String({ description: 'The entry timestamp as stored (the header timestamp for a title)' }),
  title: Type.Union([Type.String(), Type.Null()], { description: "The session's title now, `null` when it has none" }),
  cwd: Type.String({ description: "The session's cwd now" }),
  snippet: Type.String({ description: 'Text around the matches, each between `«` and `»`; `…` where text was cut. The text\'s own `«` `»` appear as `‹` `›`' }),
  score: Type.Number({ description: 'How well the entry matches: higher is better, comparable within one search only' }),
}, { $id: 'SearchHit', additionalProperties: false })

export const SearchResults = Type.Object({
  hits: Type.Array(ref(SearchHit), { description: 'Best match first, then newest' }),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'The `cursor` of the next page; `null` at the end' }),
}, { $id: 'SearchResults', additionalProperties: false })

/** The named bodies of this file, for `sharedSchemas()`. */
export const searchRouteComponents = (): TSchema[] => [SearchHit, SearchResults]

export const SearchSessions = {
  operationId: 'searchSessions',
  tags: ['search'],
  summary: "Search the text of the caller's sessions",
  description: 'Searches user and assistant text (thinking with `thinking=true`), tool-call names and arguments, ' +
    'tool results, `custom_message` content, session titles, and compaction and branch summaries. Query syntax: ' +
    'words (all must match), `"phrases"`, `-excluded` words or phrases, and `prefix*`; case and accents are ' +
    'ignored. Japanese, Chinese and Thai are cut into words by dictionary; an emoji matches itself with any ' +
    'modifiers. A query that cannot be searched for is 400 naming why. The index follows appends within a ' +
    'bounded lag (`ss_search_lag_seconds` in /metrics).',
  querystring: Type.Object({
    q: Type.String({ maxLength: MAX_QUERY_CHARS, description: `The query, at most ${MAX_QUERY_CHARS} characters` }),
    cwd: Type.Optional(Cwd),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Default 20' })),
    cursor: Type.Optional(Type.String({ minLength: 1, description: 'Opaque: `nextCursor` of the previous page of the same search; another is 400' })),
    thinking: Type.Optional(Type.Boolean({ description: 'Also search the thinking of assistant messages; default false' })),
  }),
  response: {
    200: { ...ref(SearchResults), description: 'A page of hits' },
    ...problemResponses(400, 503),
  },
}
