/**
 * API.md "Status codes" for request bodies, for every operation of the document that takes
 * one: a malformed body is 400, a body over BODY_LIMIT is 413, and a content type the operation
 * does not take is 415, wherever the document declares these statuses. Driven by the document
 * itself, so that a new route is covered without being listed here.
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

type Send = (path: string, init: Record<string, unknown>) => Promise<{ response: Response }>

async function send (op: BodyOperation, body: unknown, contentType: string): Promise<number> {
  const call = (ctx.client.request as unknown as (method: string, ...rest: Parameters<Send>) => ReturnType<Send>)
  const { response } = await call(op.method, op.path, { params: { path: PARAMS }, body, parseAs: 'text', ...raw(contentType) })
  return response.status
}

export function bodyErrorsSuite (): void {
  describe('request bodies of every operation that takes one', () => {
    const operations = bodyOperations()

    it('are found in the document', () => {
      expect(operations.map((op) => `${op.method} ${op.path}`)).toContain('POST /v1/sessions/{id}/entries')
    })

    for (const op of operations) {
      it(`${op.method} ${op.path}: 400 malformed, 413 too large, 415 wrong type (as declared)`, async () => {
        const type = op.types.find((t) => !t.includes('*')) ?? 'application/octet-stream'
        if (op.statuses.has('400') && !op.path.includes('/blobs')) expect(await send(op, malformed(type), type)).toBe(400)
        if (op.statuses.has('413')) expect(await send(op, 'x'.repeat(BODY_LIMIT + 1), type)).toBe(413)
        if (op.statuses.has('415')) expect(await send(op, '<xml/>', 'application/xml')).toBe(415)
        expect(op.statuses.has('413')).toBe(true)
      })
    }
  })
}
