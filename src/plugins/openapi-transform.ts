/**
 * The last pass over the generated OpenAPI document, for what route schemas cannot say through
 * @fastify/swagger: response headers that are always sent (`required: true`), request bodies
 * that may be left out, the operation id of a `HEAD` twin, raw bytes as `format: binary` (a
 * validated `type` would refuse the Buffer of a blob body), the security of a server with
 * tokens, and `GET /docs`, which @fastify/swagger-ui registers hidden.
 */
import { HEAD_OPERATION_ID, REQUIRED_HEADER } from '../schemas/responses.js'

/** Operation key that marks a request body as optional (a route schema's `x-` keys reach the operation). */
export const OPTIONAL_BODY = 'x-optional-body'

type Json = Record<string, unknown>

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The reference page (API.md "Health and docs"), rendered from `GET /openapi.json`; public. */
const DOCS_PATH: Json = {
  get: {
    operationId: 'getDocs',
    tags: ['docs'],
    summary: 'Human-readable reference rendered from the OpenAPI document',
    description: 'An HTML page that renders `GET /openapi.json`; needs no credentials.',
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

/** The operation id of a `HEAD` twin, which shares its `GET` route's schema. */
function nameHeadOperation (method: string, operation: Json): void {
  const headId = operation[HEAD_OPERATION_ID]
  delete operation[HEAD_OPERATION_ID]
  if (method === 'head' && typeof headId === 'string') operation.operationId = headId
}

const OCTET_STREAM = 'application/octet-stream'

/** Raw bytes (`contentMediaType: application/octet-stream`) as generators know them. */
function binarySchemas (content: unknown): void {
  if (!isJson(content)) return
  for (const media of Object.values(content)) {
    const schema = isJson(media) ? media.schema : undefined
    if (!isJson(schema) || schema.contentMediaType !== OCTET_STREAM || schema.type !== undefined) continue
    delete schema.contentMediaType
    Object.assign(schema, { type: 'string', format: 'binary' })
  }
}

function markBinaryBodies (operation: Json): void {
  if (isJson(operation.requestBody)) binarySchemas(operation.requestBody.content)
  const responses = isJson(operation.responses) ? operation.responses : {}
  for (const response of Object.values(responses)) if (isJson(response)) binarySchemas(response.content)
}

/**
 * With tokens, the anonymous alternative `{}` leaves every requirement of `holder` that is not
 * public (`[]`). The list is replaced, never changed in place: it may be the route schema's own,
 * which every other app of the process shares.
 */
function requireAuth (holder: Json): void {
  const security = holder.security
  if (!Array.isArray(security)) return
  holder.security = security.filter((requirement: unknown) => !(isJson(requirement) && Object.keys(requirement).length === 0))
}

export interface FinishOptions {
  /** The server has tokens: every route that is not public needs one. */
  authRequired?: boolean
}

/**
 * The reference page, with the error answers of `GET /openapi.json`: both are public pages, so
 * both answer a foreign Host (421) and PUBLIC_RATE_LIMIT_MAX (429) alike (src/plugins/route-access.ts).
 */
function docsPath (paths: Json): Json {
  const docs = structuredClone(DOCS_PATH)
  const page = isJson(paths['/openapi.json']) && isJson(paths['/openapi.json'].get) ? paths['/openapi.json'].get : {}
  const answers = isJson(page.responses) ? page.responses : {}
  const errors = Object.entries(answers).filter(([status]) => /^[45]\d\d$/.test(status))
  Object.assign((docs.get as Json).responses as Json, structuredClone(Object.fromEntries(errors)))
  return docs
}

/** Finishes a generated OpenAPI document in place and returns it. */
export function finishOpenapiDocument<T extends object> (document: T, options: FinishOptions = {}): T {
  const doc = document as Json
  const paths = isJson(doc.paths) ? doc.paths : (doc.paths = {})
  for (const item of Object.values(paths)) {
    if (!isJson(item)) continue
    // A route of several methods shares one operation object among them.
    if (item.head !== undefined && item.head === item.get) item.head = structuredClone(item.head)
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method) || !isJson(operation)) continue
      markRequiredHeaders(operation)
      markOptionalBody(operation)
      nameHeadOperation(method, operation)
      markBinaryBodies(operation)
      if (options.authRequired === true) requireAuth(operation)
    }
  }
  if (options.authRequired === true) requireAuth(doc)
  paths['/docs'] ??= docsPath(paths)
  return document
}
