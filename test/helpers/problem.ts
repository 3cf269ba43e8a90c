/**
 * What an error answer says (API.md "Errors"): its status, and the `SS_` code of its
 * problem+json body, so that a test pins both at once.
 */

interface Answer {
  statusCode: number
  headers: Record<string, unknown>
  body: string
}

/**
 * `{ status, code }` of an injected answer; `code` says what is wrong when the body is not a
 * problem (another content type, or not JSON), so the comparison shows it.
 */
export function problemOf (res: Answer): { status: number, code: unknown } {
  const type = String(res.headers['content-type'] ?? '')
  if (!type.startsWith('application/problem+json')) return { status: res.statusCode, code: `not a problem: ${type || 'no content type'}` }
  try {
    return { status: res.statusCode, code: (JSON.parse(res.body) as { code?: unknown }).code }
  } catch {
    return { status: res.statusCode, code: `not JSON: ${res.body.slice(0, 80)}` }
  }
}
