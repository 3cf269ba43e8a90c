/**
 * The last pass over the generated OpenAPI document, for what route schemas cannot say through
 * @fastify/swagger: response headers that are always sent (`required: true`), request bodies
 * that may be left out, and `GET /docs`, which @fastify/swagger-ui registers hidden.
 */
import { REQUIRED_HEADER } from '../schemas/responses.js'

/** Operation key that marks a request body as optional (a route schema's `x-` keys reach the operation). */
export const OPTIONAL_BODY = 'x-optional-body'

type Json = Record<string, unknown>

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The reference page (API.md "Health and docs"), rendered from `GET /openapi.json`; public. */
const DOCS_PATH: Json = {
  get: {
    tags: ['docs'],
    summary: 'Human-readable reference rendered from the OpenAPI document',
    security: [],
    responses: {
      200: { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
    },
  },
}

/** Moves the `x-required` mark of each response header's schema to the header object. */
function markRequiredHeaders (operation: Json): void {
  const responses = isJson(operation.responses) ? operation.responses : {}
  for (const response of Object.values(responses)) {
    const headers = isJson(response) && isJson(response.headers) ? response.headers : {}
    for (const header of Object.values(headers)) {
      if (!isJson(header) || !isJson(header.schema) || header.schema[REQUIRED_HEADER] !== true) continue
      delete header.schema[REQUIRED_HEADER]
      header.required = true
    }
  }
}

function markOptionalBody (operation: Json): void {
  if (operation[OPTIONAL_BODY] !== true) return
  delete operation[OPTIONAL_BODY]
  if (isJson(operation.requestBody)) operation.requestBody.required = false
}

/** Finishes a generated OpenAPI document in place and returns it. */
export function finishOpenapiDocument<T extends object> (document: T): T {
  const doc = document as Json
  const paths = isJson(doc.paths) ? doc.paths : (doc.paths = {})
  for (const item of Object.values(paths)) {
    if (!isJson(item)) continue
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || !isJson(operation)) continue
      markRequiredHeaders(operation)
      markOptionalBody(operation)
    }
  }
  paths['/docs'] ??= structuredClone(DOCS_PATH)
  return document
}
