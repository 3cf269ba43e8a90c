/**
 * The HTTP layer of the client: one undici `Pool` (keep-alive) per client, JSON in and out,
 * problem+json answers turned into `SessionStoreError`, and bounded retries of the calls that
 * are safe to repeat (see retry.ts).
 */
import type { IncomingHttpHeaders } from 'node:http'
import { Pool, type Dispatcher } from 'undici'
import { problemFrom, SessionStoreError } from './errors.js'
import { isIdempotentMethod, isRetryableError, isRetryableStatus, retryDelay, sleep } from './retry.js'
import type { ClientOptions } from './types.js'

export type Method = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'PATCH' | 'DELETE'
export type Query = Record<string, string | number | boolean | null | undefined>

export interface RequestSpec {
  method: Method
  /** Below the base URL, starting with `/`; path segments already encoded. */
  path: string
  /** Appended as a query string; `undefined` values are left out. */
  query?: Query
  /** Sent as `application/json`. */
  json?: unknown
  /** Sent verbatim with its content type. */
  raw?: { body: Uint8Array | string, contentType: string }
  /** `undefined` values are left out. */
  headers?: Record<string, string | undefined>
  /**
   * Safe to repeat although the method is not idempotent (an append with its Idempotency-Key).
   * Default: true for GET, HEAD, PUT and DELETE.
   */
  idempotent?: boolean
  /** Error statuses answered as a response instead of thrown (e.g. 404 for an existence check). */
  accept?: readonly number[]
  signal?: AbortSignal
}

export interface HttpResponse {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

const DEFAULTS = { connections: 32, timeoutMs: 30_000, retries: 3, retryDelayMs: 100 }

/** Appends `query` to `path`, leaving out `undefined` values. */
export function withQuery (path: string, query: Query | undefined): string {
  if (query === undefined) return path
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.append(key, String(value))
  }
  const qs = params.toString()
  return qs === '' ? path : `${path}?${qs}`
}

export class Transport {
  readonly #pool: Pool
  readonly #prefix: string
  readonly #headers: Record<string, string>
  readonly #timeoutMs: number
  readonly #retries: number
  readonly #retryDelayMs: number
  readonly #closing = new AbortController()

  constructor (options: ClientOptions) {
    const base = new URL(options.baseUrl)
    this.#prefix = base.pathname.replace(/\/+$/, '')
    this.#headers = { ...options.headers }
    this.#timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs
    this.#retries = options.retries ?? DEFAULTS.retries
    this.#retryDelayMs = options.retryDelayMs ?? DEFAULTS.retryDelayMs
    this.#pool = new Pool(base.origin, { connections: options.connections ?? DEFAULTS.connections, pipelining: 1 })
  }

  /** Aborts when `close()` starts: live streams end with it. */
  get closingSignal (): AbortSignal { return this.#closing.signal }

  /** Base delay of retries and reconnects, in ms. */
  get retryDelayMs (): number { return this.#retryDelayMs }

  /**
   * Sends a request and reads the whole answer. Retries a repeatable request on connection
   * failures and 502/503/504, at most `retries` times; throws `SessionStoreError` for any other
   * non-2xx answer not listed in `accept`.
   */
  async send (spec: RequestSpec): Promise<HttpResponse> {
    const repeatable = spec.idempotent ?? isIdempotentMethod(spec.method)
    const label = `${spec.method} ${spec.path}`
    for (let attempt = 1; ; attempt++) {
      const canRetry = repeatable && attempt <= this.#retries
      let res: HttpResponse
      try {
        res = await this.#attempt(spec)
      } catch (err) {
        if (!canRetry || !isRetryableError(err) || spec.signal?.aborted === true) throw err
        await sleep(retryDelay(attempt, this.#retryDelayMs), spec.signal)
        continue
      }
      if (res.status < 300 || res.status === 304 || spec.accept?.includes(res.status) === true) return res
      if (canRetry && isRetryableStatus(res.status)) {
        await sleep(retryDelay(attempt, this.#retryDelayMs, res.headers['retry-after']), spec.signal)
        continue
      }
      throw new SessionStoreError(problemFrom(res.status, res.body), label)
    }
  }

  /** `send`, then the body parsed as JSON. */
  async json<T> (spec: RequestSpec): Promise<T> {
    const res = await this.send(spec)
    return JSON.parse(res.body.toString('utf8')) as T
  }

  /**
   * Opens a long-lived response (an event stream) once, without retries: the caller reads its
   * body. `idleMs` bounds the silence between two chunks.
   */
  async open (path: string, headers: Record<string, string>, idleMs: number, signal?: AbortSignal): Promise<Dispatcher.ResponseData> {
    return await this.#pool.request({
      method: 'GET',
      path: this.#prefix + path,
      headers: { ...this.#headers, ...headers },
      headersTimeout: this.#timeoutMs,
      bodyTimeout: idleMs,
      signal,
    })
  }

  /** Ends live streams, then closes every connection once the other requests in flight have finished. */
  async close (): Promise<void> {
    this.#closing.abort()
    await this.#pool.close()
  }

  async #attempt (spec: RequestSpec): Promise<HttpResponse> {
    const headers: Record<string, string> = { ...this.#headers, accept: 'application/json' }
    for (const [name, value] of Object.entries(spec.headers ?? {})) {
      if (value !== undefined) headers[name] = value
    }
    let body: string | Uint8Array | undefined
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json)
      headers['content-type'] = 'application/json'
    } else if (spec.raw !== undefined) {
      body = spec.raw.body
      headers['content-type'] = spec.raw.contentType
    }
    const res = await this.#pool.request({
      method: spec.method,
      path: withQuery(this.#prefix + spec.path, spec.query),
      headers,
      body,
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      signal: spec.signal,
    })
    const bytes = Buffer.from(await res.body.arrayBuffer())
    return { status: res.statusCode, headers: res.headers, body: bytes }
  }
}
