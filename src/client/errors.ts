/**
 * The one error a client call throws for a non-2xx answer (API.md "Conventions": every error
 * is `application/problem+json` with a stable `SS_…` code). Connection failures that outlast
 * the retries are thrown as undici raised them.
 */
import { STATUS_CODES } from 'node:http'
import type { Problem } from './types.js'

/** The code of an error answer whose body is not problem+json (e.g. from a proxy). */
export const UNEXPECTED_RESPONSE = 'SS_UNEXPECTED_RESPONSE'

export class SessionStoreError extends Error {
  /** HTTP status of the answer (400–599). */
  readonly status: number
  /** Stable machine code, `SS_…`; branch on this, never on the message. */
  readonly code: string
  /** The HTTP status text. */
  readonly title: string
  /** Human-readable explanation; absent for 5xx. */
  readonly detail: string | undefined
  /** The problem `type` (`about:blank`). */
  readonly type: string
  /** `METHOD path` of the request that failed. */
  readonly request: string

  constructor (problem: Problem, request: string) {
    super(`${request}: ${problem.status} ${problem.code}${problem.detail === undefined ? '' : `: ${problem.detail}`}`)
    this.name = 'SessionStoreError'
    this.status = problem.status
    this.code = problem.code
    this.title = problem.title
    this.detail = problem.detail
    this.type = problem.type
    this.request = request
  }
}

/** True when `err` is a `SessionStoreError` with the given status and, if given, code. */
export function isStoreError (err: unknown, status: number, code?: string): err is SessionStoreError {
  return err instanceof SessionStoreError && err.status === status && (code === undefined || err.code === code)
}

/**
 * The problem of an error answer: the problem+json body when it is one, else a problem with
 * code `SS_UNEXPECTED_RESPONSE` and the body's first 200 characters as detail.
 */
export function problemFrom (status: number, body: Buffer): Problem {
  const title = STATUS_CODES[status] ?? 'Error'
  const text = body.toString('utf8')
  try {
    const parsed = JSON.parse(text) as Partial<Problem>
    if (typeof parsed.code === 'string' && parsed.code.startsWith('SS_')) {
      const problem: Problem = {
        type: typeof parsed.type === 'string' ? parsed.type : 'about:blank',
        title: typeof parsed.title === 'string' ? parsed.title : title,
        status,
        code: parsed.code,
      }
      if (typeof parsed.detail === 'string') problem.detail = parsed.detail
      return problem
    }
  } catch {
    // not JSON: reported below
  }
  const problem: Problem = { type: 'about:blank', title, status, code: UNEXPECTED_RESPONSE }
  if (text.trim() !== '') problem.detail = text.slice(0, 200)
  return problem
}
