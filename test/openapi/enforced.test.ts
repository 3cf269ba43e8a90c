/**
 * What the server enforces, the document says, and the other way round: for `terminalId`,
 * `cwd`, a session stream's `Last-Event-ID` and the listing's `cursor`, every value of a table
 * of edge cases is refused by the document's schema exactly when the server refuses it as
 * malformed (`400 SS_VALIDATION` or `SS_INVALID_ARGUMENT`). The document's schemas are checked
 * with the contract suite's validator (JSON Schema 2020-12, test/contract/openapi-validator.ts).
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { validatorOf } from '../contract/openapi-validator.js'
import { problemOf } from '../helpers/problem.js'

type Json = Record<string, any>

const document: Json = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8'))
const validator = (schema: Json): ((value: unknown) => boolean) => (value) => validatorOf(schema)(value) as boolean
const property = (component: string, name: string): Json => document.components.schemas[component].properties[name]
/** A parameter of an operation: its schema, and its description (which stands beside the schema). */
const parameter = (path: string, method: string, name: string): Json =>
  (document.paths[path][method].parameters as Json[]).find((p) => p.name === name) as Json

/** The codes with which the server refuses a malformed value. */
const MALFORMED = new Set(['SS_VALIDATION', 'SS_INVALID_ARGUMENT'])
const refusedAsMalformed = (answer: { status: number, code: unknown }): boolean => answer.status === 400 && MALFORMED.has(String(answer.code))

let app: App
beforeAll(async () => { app = await buildTestApp() })
afterAll(async () => { await app.close() })

/** `value → [document accepts, server accepts]`, for the values where they disagree (none, for a true document). */
async function disagreements (values: unknown[], accepts: (value: unknown) => boolean, server: (value: any) => Promise<{ status: number, code: unknown }>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (const value of values) {
    const answer = await server(value)
    if (accepts(value) === refusedAsMalformed(answer)) out[JSON.stringify(value)] = { document: accepts(value), server: answer }
  }
  return out
}

describe('what the server enforces, the document says', () => {
  it('terminalId: the same pattern and length', async () => {
    const values = ['t1', 'a.b_c-d', '...', '.a', 'x'.repeat(128), '', '.', '..', 'a/b', 'a b', 'ü', 'x'.repeat(129), 7]
    const schema = property('ContinueSessionBody', 'terminalId')
    expect(schema.pattern).toEqual(expect.stringContaining('{1,128}'))
    const found = await disagreements(values, validator(schema), async (terminalId) =>
      problemOf(await app.inject({ method: 'POST', url: '/v1/sessions/continue', payload: { cwd: '/enforced', terminalId } })))
    expect(found).toEqual({})
  })

  // The directory name of a cwd is `--` + the cwd without one leading `/` or `\` + `--`, at most
  // 255 bytes; for ASCII the document says exactly that, and names the byte bound in its description.
  it('cwd: the same characters and length, with and without a leading slash', async () => {
    const long = (n: number): string => 'x'.repeat(n)
    const values = [
      '/p', 'relative', 'C:\\work', '/a:b\\c', `/${long(250)}`, `/${long(251)}`, `/${long(252)}`, `\\${long(251)}`, `\\${long(252)}`,
      long(250), long(251), long(252), '', '/a\nb', '/a\rb', '/a\u0000b', '/tab\there', 5,
    ]
    const schema = property('CreateSessionBody', 'cwd')
    expect(schema.description).toContain('at most 255 UTF-8 bytes')
    for (const [where, accepts] of [['CreateSessionBody', validator(schema)], ['MoveSessionBody', validator(property('MoveSessionBody', 'cwd'))]] as const) {
      const found = await disagreements(values, accepts, async (cwd) => problemOf(await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd } })))
      expect(found, where).toEqual({})
    }
    const query = validator(parameter('/v1/sessions/recent', 'get', 'cwd').schema)
    const strings = values.filter((v): v is string => typeof v === 'string' && !v.includes('\u0000'))
    const found = await disagreements(strings, query, async (cwd) =>
      problemOf(await app.inject({ method: 'GET', url: `/v1/sessions/recent?cwd=${encodeURIComponent(cwd)}` })))
    expect(found).toEqual({})
  })

  it('Last-Event-ID of a session stream: a non-negative integer, blank for none', async () => {
    const { schema, description } = parameter('/v1/sessions/{id}/events', 'get', 'last-event-id')
    expect(description).toMatch(/non-negative integer/)
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/enforced' } })
    const url = `${base}/v1/sessions/${created.json().header.id as string}/events`
    const values = ['0', '42', '007', '1'.repeat(15), '', '-1', '1.5', '+1', '1e3', 'abc', '0x10', '1'.repeat(16)]
    const found = await disagreements(values, validator(schema), async (lastEventId: string) => {
      const abort = new AbortController()
      const res = await fetch(url, { headers: { 'last-event-id': lastEventId }, signal: abort.signal })
      const answer = res.status === 200 ? { status: 200, code: undefined } : { status: res.status, code: ((await res.json()) as { code?: unknown }).code }
      abort.abort()
      return answer
    })
    expect(found).toEqual({})
  })

  it('cursor: at least one character', async () => {
    const { schema } = parameter('/v1/sessions', 'get', 'cursor')
    expect(schema).toMatchObject({ minLength: 1 })
    // A cursor the server did not issue is refused as such (SS_INVALID_CURSOR), not as malformed.
    const found = await disagreements(['', 'x', 'not-a-cursor'], validator(schema), async (cursor: string) =>
      problemOf(await app.inject({ method: 'GET', url: `/v1/sessions?cursor=${encodeURIComponent(cursor)}` })))
    expect(found).toEqual({})
    expect(problemOf(await app.inject({ method: 'GET', url: '/v1/sessions?cursor=x' }))).toEqual({ status: 400, code: 'SS_INVALID_CURSOR' })
  })
})
