/**
 * Checks real responses against openapi/openapi.json: the operation exists, the status is
 * declared for it, the content type is one the status declares (or there is no body when it
 * declares none), the body validates against the declared schema (JSON Schema 2020-12, with
 * `#/components/schemas/…` resolved), and declared headers are present when required and valid
 * when sent. It also records which operations and statuses were seen, for the coverage checks.
 */
import { readFileSync } from 'node:fs'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

type Json = Record<string, unknown>

export interface MediaObject { schema?: Json }
export interface HeaderObject { schema?: Json, required?: boolean }
export interface ResponseObject { content?: Record<string, MediaObject>, headers?: Record<string, HeaderObject> }
export interface OperationObject { responses: Record<string, ResponseObject> }

/** What a check needs to know about one response; `body` is undefined when it was not read. */
export interface ObservedResponse {
  method: string
  /** The path template of the document, e.g. `/v1/sessions/{id}`. */
  path: string
  status: number
  headers: Headers
  body?: string
}

const COMPONENTS = '#/components/schemas/'
const ROOT_ID = 'openapi-components'
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

export const DOCUMENT = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')) as {
  openapi: string
  paths: Record<string, Record<string, OperationObject>>
  components: { schemas: Record<string, Json> }
}

/** Rewrites component refs so that every schema resolves them through one registered root. */
function withRootRefs<T> (value: T): T {
  return JSON.parse(JSON.stringify(value).replaceAll(`"${COMPONENTS}`, `"${ROOT_ID}#/$defs/`)) as T
}

const ajv = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true, allErrors: true })
addFormats.default(ajv)
ajv.addSchema({ $id: ROOT_ID, $defs: withRootRefs(DOCUMENT.components.schemas) })
const compiled = new Map<Json, ValidateFunction>()

/** A validator of one schema of the document (compiled once; `#/components/schemas/…` resolved). */
export function validatorOf (schema: Json): ValidateFunction {
  let validate = compiled.get(schema)
  if (validate === undefined) compiled.set(schema, validate = ajv.compile(withRootRefs(schema)))
  return validate
}

/** Every `METHOD path` of the document. */
export function documentedOperations (): string[] {
  return Object.entries(DOCUMENT.paths).flatMap(([path, item]) =>
    Object.keys(item).filter((m) => HTTP_METHODS.includes(m)).map((m) => `${m.toUpperCase()} ${path}`))
}

/** Every `METHOD path status` the document declares. */
export function documentedStatuses (): string[] {
  return Object.entries(DOCUMENT.paths).flatMap(([path, item]) => Object.entries(item)
    .filter(([m]) => HTTP_METHODS.includes(m))
    .flatMap(([m, op]) => Object.keys(op.responses).map((s) => `${m.toUpperCase()} ${path} ${s}`)))
}

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaTypeOf (headers: Headers): string | undefined {
  return headers.get('content-type')?.split(';')[0]?.trim().toLowerCase()
}

const isJsonMedia = (media: string): boolean => media === 'application/json' || media.endsWith('+json')
const isTextMedia = (media: string): boolean => media.startsWith('text/') || media === 'application/x-ndjson'

function bodyProblems (schema: Json | undefined, media: string, observed: ObservedResponse): string[] {
  const text = observed.body
  if (schema === undefined || text === undefined || observed.method === 'HEAD') return []
  let value: unknown = text
  if (isJsonMedia(media)) {
    try {
      value = JSON.parse(text)
    } catch {
      return [`body is not JSON: ${text.slice(0, 80)}`]
    }
  } else if (!isTextMedia(media)) {
    return [] // bytes: the schema only annotates them
  }
  const validate = validatorOf(schema)
  if (validate(value)) return []
  return (validate.errors ?? []).map((e) => `body${e.instancePath} ${e.message ?? 'is invalid'}`)
}

function headerProblems (declared: Record<string, HeaderObject>, headers: Headers): string[] {
  const problems: string[] = []
  for (const [name, header] of Object.entries(declared)) {
    const value = headers.get(name)
    if (value === null) {
      if (header.required === true) problems.push(`required header ${name} is missing`)
      continue
    }
    if (header.schema !== undefined && !validatorOf(header.schema)(value)) problems.push(`header ${name}: ${value} does not match its schema`)
  }
  return problems
}

/** Everything in `observed` that the document does not declare; `[]` when it conforms. */
export function responseProblems (observed: ObservedResponse): string[] {
  const operation = DOCUMENT.paths[observed.path]?.[observed.method.toLowerCase()]
  if (operation === undefined) return [`${observed.method} ${observed.path} is not in the document`]
  const response = operation.responses[String(observed.status)] ?? operation.responses.default
  if (response === undefined) return [`status ${observed.status} is not declared`]
  const problems = headerProblems(response.headers ?? {}, observed.headers)
  const media = mediaTypeOf(observed.headers)
  if (response.content === undefined) {
    if (observed.body !== undefined && observed.body !== '') problems.push(`declares no body, got: ${observed.body.slice(0, 80)}`)
    return problems
  }
  if (media === undefined || response.content[media] === undefined) {
    return [...problems, `content type ${String(media)} is not declared (${Object.keys(response.content).join(', ')})`]
  }
  problems.push(...bodyProblems(response.content[media].schema, media, observed))
  if (media === 'application/problem+json' && observed.body !== undefined && observed.method !== 'HEAD') {
    const status = (JSON.parse(observed.body) as { status?: unknown }).status
    if (status !== observed.status) problems.push(`problem status ${String(status)} differs from HTTP ${observed.status}`)
  }
  return problems
}

/** `METHOD path` and `METHOD path status` of every response checked so far. */
export class Coverage {
  readonly operations = new Set<string>()
  readonly statuses = new Set<string>()

  record (observed: ObservedResponse): void {
    const operation = `${observed.method} ${observed.path}`
    this.operations.add(operation)
    this.statuses.add(`${operation} ${observed.status}`)
  }
}
