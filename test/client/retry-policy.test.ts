/**
 * The retry policy: which methods, statuses and errors are retried, and the bounds of the
 * delay between attempts.
 */
import { describe, expect, it } from 'vitest'
import {
  isIdempotentMethod, isRetryableError, isRetryableStatus, MAX_RETRY_DELAY_MS, retryDelay, sleep,
} from '../../src/client/retry.js'

const errorWith = (code: string): Error => Object.assign(new Error(code), { code })

describe('retry policy', () => {
  it('repeats GET, HEAD, PUT and DELETE by themselves, never POST or PATCH', () => {
    expect(['GET', 'HEAD', 'PUT', 'DELETE'].map(isIdempotentMethod)).toEqual([true, true, true, true])
    expect(['POST', 'PATCH'].map(isIdempotentMethod)).toEqual([false, false])
  })

  it('retries 502, 503 and 504 only', () => {
    expect([502, 503, 504].map(isRetryableStatus)).toEqual([true, true, true])
    expect([400, 404, 409, 412, 422, 500, 507].map(isRetryableStatus)).toEqual([false, false, false, false, false, false, false])
  })

  it('retries connection failures, also wrapped as a cause, but never an abort', () => {
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT']) {
      expect(isRetryableError(errorWith(code)), code).toBe(true)
    }
    expect(isRetryableError(new TypeError('fetch failed', { cause: errorWith('ECONNRESET') }))).toBe(true)
    expect(isRetryableError(Object.assign(errorWith('ECONNRESET'), { name: 'AbortError' }))).toBe(false)
    expect(isRetryableError(errorWith('UND_ERR_ABORTED'))).toBe(false)
    expect(isRetryableError(new SyntaxError('bad json'))).toBe(false)
    expect(isRetryableError(undefined)).toBe(false)
  })

  it('doubles the delay per attempt within its jitter band and caps it', () => {
    for (let i = 0; i < 50; i++) {
      const first = retryDelay(1, 100)
      const third = retryDelay(3, 100)
      expect(first).toBeGreaterThanOrEqual(50)
      expect(first).toBeLessThanOrEqual(100)
      expect(third).toBeGreaterThanOrEqual(200)
      expect(third).toBeLessThanOrEqual(400)
      expect(retryDelay(30, 100)).toBe(MAX_RETRY_DELAY_MS)
    }
  })

  it('waits at least Retry-After seconds, within the cap', () => {
    expect(retryDelay(1, 10, '2')).toBe(2000)
    expect(retryDelay(1, 10, ['3'])).toBe(3000)
    expect(retryDelay(1, 10, '3600')).toBe(MAX_RETRY_DELAY_MS)
    expect(retryDelay(1, 10, 'Wed, 21 Oct 2015 07:28:00 GMT')).toBeLessThanOrEqual(10)
  })

  it('stops sleeping with the signal reason when aborted', async () => {
    const controller = new AbortController()
    const slept = sleep(60_000, controller.signal)
    controller.abort(new Error('stop'))
    await expect(slept).rejects.toThrow('stop')
  })
})
