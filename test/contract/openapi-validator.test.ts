/**
 * The response check of the contract suite, on made-up answers: each way an answer can stray
 * from the document is reported, and a conforming answer passes.
 */
import { describe, expect, it } from 'vitest'
import { documentedOperations, documentedStatuses, responseProblems, type ObservedResponse } from './openapi-validator.js'

const SESSION = {
  header: { type: 'session', id: 's1' },
  leafId: null,
  entryCount: 0,
  messageCount: 0,
  persisted: false,
  modified: '2026-01-01T00:00:00.000Z',
  etag: '"e"',
}
const PROBLEM = { type: 'about:blank', title: 'Not Found', status: 404, code: 'SS_SESSION_NOT_FOUND' }

const observed = (overrides: Partial<ObservedResponse> & { json?: unknown, type?: string }): ObservedResponse => ({
  method: 'GET',
  path: '/v1/sessions/{id}',
  status: 200,
  headers: new Headers({ 'content-type': overrides.type ?? 'application/json; charset=utf-8', etag: '"e"' }),
  body: JSON.stringify(overrides.json ?? SESSION),
  ...overrides,
})

describe('responseProblems', () => {
  it('passes a conforming answer', () => {
    expect(responseProblems(observed({}))).toEqual([])
    expect(responseProblems(observed({ status: 404, json: PROBLEM, type: 'application/problem+json' }))).toEqual([])
  })

  it('reports an operation the document does not have', () => {
    expect(responseProblems(observed({ method: 'PUT' }))).toEqual(['PUT /v1/sessions/{id} is not in the document'])
  })

  it('reports an undeclared status', () => {
    expect(responseProblems(observed({ status: 409, json: PROBLEM }))).toEqual(['status 409 is not declared'])
  })

  it('reports an undeclared content type', () => {
    expect(responseProblems(observed({ type: 'text/plain' }))[0]).toMatch(/^content type text\/plain is not declared/)
  })

  it('reports a body that breaks the schema, including unknown keys', () => {
    expect(responseProblems(observed({ json: { ...SESSION, extra: 1 } }))).toEqual(['body must NOT have additional properties'])
    expect(responseProblems(observed({ json: { ...SESSION, entryCount: -1 } }))).toEqual(['body/entryCount must be >= 0'])
    expect(responseProblems(observed({ body: '{' }))[0]).toMatch(/^body is not JSON/)
  })

  it('reports a missing required header and a problem whose status differs', () => {
    expect(responseProblems(observed({ headers: new Headers({ 'content-type': 'application/json' }) })))
      .toEqual(['required header ETag is missing'])
    const mismatched = observed({ status: 404, json: { ...PROBLEM, status: 400 }, type: 'application/problem+json' })
    expect(responseProblems(mismatched)).toEqual(['problem status 400 differs from HTTP 404'])
  })

  it('reports a body where the status declares none', () => {
    const deleted = observed({ method: 'DELETE', status: 204, body: 'surprise' })
    expect(responseProblems(deleted)).toEqual(['declares no body, got: surprise'])
  })
})

describe('the document', () => {
  it('lists its operations and statuses for the coverage checks', () => {
    expect(documentedOperations()).toContain('GET /v1/sessions/{id}/events')
    expect(documentedStatuses()).toContain('POST /v1/sessions/{id}/entries 412')
  })
})
