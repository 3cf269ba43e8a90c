/**
 * Request bodies at the root scope. JSON is Fastify's own parser (keys named `__proto__` are
 * data, as in an imported file), except that an empty body is
 * no body: a `DELETE` or a body-less fork sent with `Content-Type: application/json` is not a
 * malformed request, and a route that needs a body still answers 400 through its schema. JSON
 * and JSONL nested deeper than `MAX_JSON_DEPTH` are 400 (src/plugins/json-depth.ts). A number
 * that a double cannot hold as sent (`1e309`, `12345678901234567890`) is 400
 * `SS_INEXACT_NUMBER` naming its JSON path (src/plugins/json-numbers.ts): the body would
 * otherwise be stored with `null` or a rounded number in its place.
 * JSONL bodies (session import, API.md "Sessions") arrive as `application/x-ndjson`,
 * `application/jsonl` or `text/plain` and are parsed as one UTF-8 string, but only for a route
 * that opts in, either with `config: { textBody: true }` or with a string body schema. Any other
 * route answers these types 415, like every other non-JSON type. Such a route also takes its text
 * sent as `application/json`, the type many clients put on every request: a one-line JSONL file
 * is a JSON document, and a longer one is not JSON at all. Blob routes replace all parsers in
 * their own scope.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { InexactNumber, InvalidJson, UnsupportedMediaType } from '../errors.js'
import { MAX_JSON_DEPTH, nestedDeeperThan } from './json-depth.js'
import { firstInexactNumber, jsonPathAt, tokenPreview } from './json-numbers.js'

export const TEXT_BODY_TYPES = ['application/x-ndjson', 'application/jsonl', 'text/plain'] as const

const TOO_DEEP = `Body nests objects or arrays deeper than ${MAX_JSON_DEPTH} levels`

/** `SS_INEXACT_NUMBER` for the first number of `text` that a double cannot hold as sent, else null. */
function inexactNumberIn (text: string, perLine = false): Error | null {
  const found = firstInexactNumber(text, perLine)
  return found === undefined ? null : new InexactNumber(jsonPathAt(text, found.at, perLine) || '/', tokenPreview(found.token))
}

/** True when the matched route takes a text body. */
function acceptsText (req: FastifyRequest): boolean {
  const { config, schema } = req.routeOptions
  if (config.textBody === true) return true
  const body = schema?.body as { type?: unknown } | undefined
  return body?.type === 'string'
}

async function bodyParsers (app: FastifyInstance): Promise<void> {
  // `__proto__` and `constructor` keys are kept as plain data, as JSON.parse and the session
  // import keep them: the parsed object is never merged into another, so no prototype changes.
  const json = app.getDefaultJsonParser('ignore', 'ignore')
  app.removeContentTypeParser('application/json')
  const text = (body: string, done: (err: Error | null, body?: unknown) => void): void => {
    if (nestedDeeperThan(body, MAX_JSON_DEPTH, true)) done(new InvalidJson(TOO_DEEP), undefined)
    else done(inexactNumberIn(body, true), body)
  }
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const source = body.toString()
    if (acceptsText(req)) text(source, done)
    else if (source === '') done(null, undefined)
    else if (nestedDeeperThan(source, MAX_JSON_DEPTH)) done(new InvalidJson(TOO_DEEP), undefined)
    else json(req, source, (err, parsed) => { done(err ?? inexactNumberIn(source), parsed) })
  })
  app.addContentTypeParser([...TEXT_BODY_TYPES], { parseAs: 'string' }, (req, body, done) => {
    if (!acceptsText(req)) done(new UnsupportedMediaType(String(req.headers['content-type'])), undefined)
    else text(body.toString(), done)
  })
}

export default fp(bodyParsers, { name: 'body-parsers', fastify: '5.x' })
