/**
 * API.md "Status codes": a number that a double cannot hold as sent is invalid input (400
 * `SS_INEXACT_NUMBER`, naming its JSON path), in JSON and JSONL bodies alike, and changes
 * nothing; a number a double holds exactly is stored with its value. Query integers beyond
 * 2^53 − 1 are 400 too, never rounded.
 */
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { firstInexactNumber, isExactNumber, jsonPathAt } from '../../src/plugins/json-numbers.js'
import { buildTestApp } from '../helpers/app.js'
import { problemOf } from '../helpers/problem.js'
import { createSession } from '../http/session-helpers.js'

const JSON_TYPE = { 'content-type': 'application/json' }

describe('isExactNumber and firstInexactNumber', () => {
  it('takes every number a double holds, however it is written', () => {
    for (const token of ['0', '-0', '1.0', '1e2', '1E+2', '0.1', '0.30000000000000004', '9007199254740992',
      '1.7976931348623157e308', '5e-324', '2.5e-7', '1' + '0'.repeat(300), '100000000000000000000']) {
      expect(isExactNumber(token), token).toBe(true)
    }
  })

  it('refuses numbers beyond a double, below its precision or rounded', () => {
    for (const token of ['1e309', '-1e309', '9'.repeat(10_000), '1e-400', '12345678901234567890', '9007199254740993',
      '0.10000000000000001', '3.14159265358979323846']) {
      expect(isExactNumber(token), token.slice(0, 30)).toBe(false)
    }
  })

  it('finds what JSON.stringify writes exact, whatever the double', () => {
    fc.assert(fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true })), (values) => {
      expect(firstInexactNumber(JSON.stringify({ values }))).toBeUndefined()
    }), { numRuns: 500 })
  })

  it('passes over numbers in strings and keys, and names the path of the first one that is not exact', () => {
    const text = '{"a\\"1e999":"12345678901234567890","list":[1,{"x/y":[0,1e999]}]}'
    const found = firstInexactNumber(text)
    expect(found?.token).toBe('1e999')
    expect(jsonPathAt(text, found!.at)).toBe('/list/1/x~1y/1')
  })

  it('reads JSONL line by line, naming the line, and passes over a line that is not JSON', () => {
    const text = '{"a":1}\n{"torn":"1e999\n{"b":[2,1e999]}\n'
    const found = firstInexactNumber(text, true)
    expect(found?.token).toBe('1e999')
    expect(jsonPathAt(text, found!.at, true)).toBe('line 3 /b/1')
    expect(firstInexactNumber('{"a":1}\n{"torn":1e999', true)).toBeUndefined()
  })
})

describe('numbers in bodies over HTTP', () => {
  let app: App
  beforeEach(async () => { app = await buildTestApp() })
  afterEach(async () => { await app.close() })

  const appendRaw = async (id: string, payload: string) =>
    await app.inject({ method: 'POST', url: `/v1/sessions/${id}/entries`, headers: JSON_TYPE, payload })

  it('refuses an entry whose number a double cannot hold, naming its path, and appends nothing', async () => {
    const { header } = await createSession(app)
    const cases: Array<[string, string]> = [
      ['{"type":"custom","customType":"x","data":1e309}', '/data'],
      [`{"entries":[{"type":"custom","customType":"x","data":{"n":[${'9'.repeat(10_000)}]}}]}`, '/entries/0/data/n/0'],
      ['{"type":"custom","customType":"x","data":{"id":12345678901234567890}}', '/data/id'],
      ['{"type":"custom","customType":"x","data":1e-400}', '/data'],
    ]
    for (const [payload, path] of cases) {
      const res = await appendRaw(header.id, payload)
      expect(problemOf(res), payload.slice(0, 60)).toEqual({ status: 400, code: 'SS_INEXACT_NUMBER' })
      expect(res.json().detail).toContain(`at ${path} (`)
    }
    const entries = await app.inject({ method: 'GET', url: `/v1/sessions/${header.id}/entries` })
    expect(entries.json().total).toBe(0)
  })

  it('stores every number a double holds with its value', async () => {
    const { header } = await createSession(app)
    const sent = '[1.0,1e2,-0,0.1,0.30000000000000004,9007199254740991,1.7976931348623157e308,5e-324,"12345678901234567890"]'
    const res = await appendRaw(header.id, `{"type":"custom","customType":"x","data":${sent}}`)
    expect(res.statusCode, res.body).toBe(201)
    const entryId = res.json().entries[0].id as string
    const read = await app.inject({ method: 'GET', url: `/v1/sessions/${header.id}/entries/${entryId}` })
    // -0 is the value 0, and JSON writes it so.
    expect(read.json().data).toEqual((JSON.parse(sent) as unknown[]).map((n) => Object.is(n, -0) ? 0 : n))
  })

  it('refuses the same numbers in an imported file, naming the line', async () => {
    const file = '{"type":"session","version":3,"id":"inexact","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n' +
      '{"type":"custom","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","customType":"x","data":[0,12345678901234567890]}\n'
    const res = await app.inject({ method: 'POST', url: '/v1/sessions/import', headers: { 'content-type': 'application/x-ndjson' }, payload: file })
    expect(problemOf(res)).toEqual({ status: 400, code: 'SS_INEXACT_NUMBER' })
    expect(res.json().detail).toContain('at line 2 /data/1 (12345678901234567890)')
    expect((await app.inject({ method: 'GET', url: '/v1/sessions/inexact' })).statusCode).toBe(404)
  })

  it('refuses query integers beyond 2^53 - 1 instead of rounding them', async () => {
    const { header } = await createSession(app)
    for (const after of ['99999999999999999999', '9007199254740993', '9007199254740992', '1e400']) {
      const res = await app.inject({ method: 'GET', url: `/v1/sessions/${header.id}/entries?after=${after}` })
      expect(problemOf(res), after).toEqual({ status: 400, code: 'SS_VALIDATION' })
      expect(res.json().detail).toContain('querystring/after')
    }
    const largest = await app.inject({ method: 'GET', url: `/v1/sessions/${header.id}/entries?after=9007199254740991` })
    expect(largest.statusCode).toBe(200)
    expect(largest.json().after).toBe(Number.MAX_SAFE_INTEGER)
  })
})
