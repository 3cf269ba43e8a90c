/**
 * API.md "Status codes" for request bodies, for every operation of the document that takes
 * one: a malformed body is 400, a body over BODY_LIMIT is 413, and a content type the operation
 * does not take is 415, each with its `SS_` code. The document must declare each of these
 * statuses (a blob body is opaque bytes, so it cannot be malformed; an operation that takes any
 * type has none to refuse). Driven by the document itself, so that a new route is covered
 * without being listed here.
 */
import { describe, expect, it } from 'vitest'
import { raw } from '../contract-client.js'
import { BODY_LIMIT } from '../contract-server.js'
import { DOCUMENT } from '../openapi-validator.js'
import { ctx } from './context.js'

interface BodyOperation {
  method: string
  path: string
  /** The content types the operation takes. */
  types: string[]
  statuses: Set<string>
}

function bodyOperations (): BodyOperation[] {
  return Object.entries(DOCUMENT.paths).flatMap(([path, item]) => Object.entries(item).flatMap(([method, op]) => {
    const content = (op as { requestBody?: { content?: Record<string, unknown> } }).requestBody?.content
    if (content === undefined) return []
    return [{ method: method.toUpperCase(), path, types: Object.keys(content), statuses: new Set(Object.keys(op.responses)) }]
  }))
}

/** Path parameters that pass every check made before the body is read. */
const PARAMS = { id: 'any-session', entryId: 'any-entry', hex: '0'.repeat(64) }

/** A body the operation's parser rejects: broken JSON, or JSONL without a session header. */
const malformed = (type: string): string => type === 'application/json' ? '{"cwd": ' : 'not a session file\n'

type Send = (path: string, init: Record<string, unknown>) => Promise<{ response: Response, data?: unknown, error?: unknown }>

/** The status and problem code of the answer. */
async function send (op: BodyOperation, body: unknown, contentType: string): Promise<{ status: number, code: unknown }> {
  const call = ctx.client.request as unknown as (method: string, ...rest: Parameters<Send>) => ReturnType<Send>
  const { response, data, error } = await call(op.method, op.path, { params: { path: PARAMS }, body, parseAs: 'text', ...raw(contentType) })
  // The client hands an error answer over parsed when it is JSON, as text otherwise.
  const answer = error ?? data
  if (typeof answer === 'object' && answer !== null) return { status: response.status, code: (answer as { code?: unknown }).code }
  let code: unknown
  try { code = (JSON.parse(String(answer)) as { code?: unknown }).code } catch { code = `not JSON: ${String(answer).slice(0, 80)}` }
  return { status: response.status, code }
}

/** The code of a malformed body: broken JSON; a JSONL file whose first line is no header is an invalid argument. */
const malformedCode = (type: string): string => type === 'application/json' ? 'SS_INVALID_JSON' : 'SS_INVALID_ARGUMENT'

export function bodyErrorsSuite (): void {
  describe('request bodies of every operation that takes one', () => {
    const operations = bodyOperations()

    it('are found in the document', () => {
      expect(operations.map((op) => `${op.method} ${op.path}`)).toContain('POST /v1/sessions/{id}/entries')
    })

    for (const op of operations) {
      const opaque = op.path.includes('/blobs')
      const anyType = op.types.some((t) => t.includes('*'))
      const checks = [opaque ? undefined : '400 malformed', '413 too large', anyType ? undefined : '415 wrong type'].filter((c) => c !== undefined)
      it(`${op.method} ${op.path}: ${checks.join(', ')}, declared and answered`, async () => {
        const type = op.types.find((t) => !t.includes('*')) ?? 'application/octet-stream'
        const declared = ['413', ...opaque ? [] : ['400'], ...anyType ? [] : ['415']]
        expect(declared.filter((status) => !op.statuses.has(status))).toEqual([])
        if (!opaque) expect(await send(op, malformed(type), type)).toEqual({ status: 400, code: malformedCode(type) })
        expect(await send(op, 'x'.repeat(BODY_LIMIT + 1), type)).toEqual({ status: 413, code: 'SS_BODY_TOO_LARGE' })
        if (!anyType) expect(await send(op, '<xml/>', 'application/xml')).toEqual({ status: 415, code: 'SS_UNSUPPORTED_MEDIA_TYPE' })
      })
    }
  })
}
