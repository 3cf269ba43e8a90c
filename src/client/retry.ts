/**
 * When a call may be sent again and how long to wait first. A retry is only safe when sending
 * the request twice has the effect of sending it once: GET, HEAD, PUT and DELETE are, an append
 * is because it carries an Idempotency-Key, any other POST (and PATCH) is not.
 */

/** Answers that mean "the server (or a proxy) could not handle it now; try again". */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([502, 503, 504])

/** Connection-level failures: the request may or may not have reached the server. */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT',
])

/** Longest wait between two attempts, in ms, whatever the base delay or `Retry-After` say. */
export const MAX_RETRY_DELAY_MS = 5000

/** Methods that are safe to repeat by themselves. */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE'])

export function isIdempotentMethod (method: string): boolean {
  return IDEMPOTENT_METHODS.has(method)
}

export function isRetryableStatus (status: number): boolean {
  return RETRYABLE_STATUSES.has(status)
}

/** True for a connection failure worth another attempt (never for an abort). */
export function isRetryableError (err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const { code, name, cause } = err as { code?: unknown, name?: unknown, cause?: unknown }
  if (name === 'AbortError') return false
  if (typeof code === 'string' && RETRYABLE_CODES.has(code)) return true
  // fetch-style wrappers put the socket error under `cause`.
  return cause !== undefined && cause !== err && isRetryableError(cause)
}

/**
 * The wait before retry number `attempt` (1-based), in ms: `baseMs · 2^(attempt-1)` with jitter
 * in its upper half, or the server's `Retry-After` seconds when larger; at most
 * `MAX_RETRY_DELAY_MS`.
 */
export function retryDelay (attempt: number, baseMs: number, retryAfter?: string | string[]): number {
  const exponential = baseMs * 2 ** (attempt - 1)
  const jittered = exponential / 2 + Math.random() * (exponential / 2)
  const header = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter
  const seconds = header !== undefined && /^\d+$/.test(header.trim()) ? Number(header.trim()) * 1000 : 0
  return Math.min(MAX_RETRY_DELAY_MS, Math.max(jittered, seconds))
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export async function sleep (ms: number, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted()
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(done, ms)
    function done (): void {
      signal?.removeEventListener('abort', aborted)
      resolve()
    }
    function aborted (): void {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', aborted, { once: true })
  })
}
