/**
 * Query strings and path parameters arrive as strings; routes declare numbers and booleans.
 * Ajv's `coerceTypes` would do this everywhere, bodies included, where it turns `null` into `""`
 * inside `anyOf` and `"5"` into `5`. So Ajv never coerces, and this plugin converts exactly the
 * querystring and params properties declared `integer`, `number` or `boolean`, before validation.
 * A value that does not convert is left alone for validation to reject with 400, and a number
 * that a double cannot hold as sent (an integer beyond 2^53 − 1, `1e400`) is 400 `SS_VALIDATION`
 * naming it: converted, it would be rounded (`?after=99999999999999999999` read as 1e20).
 */
import type { FastifyInstance, preValidationAsyncHookHandler, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { Validation } from '../errors.js'
import { isExactNumber } from './json-numbers.js'

type Scalar = 'integer' | 'number' | 'boolean'
type Coercions = ReadonlyArray<readonly [string, Scalar]>

const NUMERIC = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

function scalarOf (schema: unknown): Scalar | undefined {
  const type = (schema as { type?: unknown } | undefined)?.type
  return type === 'integer' || type === 'number' || type === 'boolean' ? type : undefined
}

/** The declared scalar properties of an object schema. */
function coercionsOf (schema: unknown): Coercions {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {}
  const out: Array<[string, Scalar]> = []
  for (const [key, value] of Object.entries(properties)) {
    const scalar = scalarOf(value)
    if (scalar !== undefined) out.push([key, scalar])
  }
  return out
}

/**
 * `value` converted to `scalar`, or `value` itself when it does not convert.
 * @throws Validation naming `at` for a number that would not be exact: beyond a double, or an
 * `integer` beyond `Number.MAX_SAFE_INTEGER`.
 */
export function coerceScalar (value: unknown, scalar: Scalar, at = 'value'): unknown {
  if (typeof value !== 'string') return value
  if (scalar === 'boolean') return value === 'true' ? true : value === 'false' ? false : value
  if (!NUMERIC.test(value)) return value
  const number = Number(value)
  // JSON's number syntax (no leading `.`, no bare trailing `.`) is what isExactNumber reads.
  const exact = isExactNumber(value.replace(/^(-?)\./, '$10.').replace(/\.(?=$|[eE])/, ''))
  if (!exact || (scalar === 'integer' && Number.isInteger(number) && !Number.isSafeInteger(number))) {
    throw new Validation(`${at} must be a number a double holds exactly (an integer at most ${Number.MAX_SAFE_INTEGER}), got ${value.slice(0, 40)}`)
  }
  return number
}

function apply (target: unknown, coercions: Coercions, where: string): void {
  if (typeof target !== 'object' || target === null) return
  const record = target as Record<string, unknown>
  for (const [key, scalar] of coercions) {
    if (key in record) record[key] = coerceScalar(record[key], scalar, `${where}/${key}`)
  }
}

function asArray<T> (value: T | T[] | undefined): T[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}

async function queryCoercion (app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route: RouteOptions) => {
    const query = coercionsOf(route.schema?.querystring)
    const params = coercionsOf(route.schema?.params)
    if (query.length === 0 && params.length === 0) return
    const coerce: preValidationAsyncHookHandler = async (req) => {
      apply(req.query, query, 'querystring')
      apply(req.params, params, 'params')
    }
    route.preValidation = [coerce, ...asArray(route.preValidation)]
  })
}

export default fp(queryCoercion, { name: 'query-coercion', fastify: '5.x' })
