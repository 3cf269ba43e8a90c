/**
 * The few session-store routes the oh-my-pi backend uses, over the global `fetch` (so that it
 * runs under Bun as under Node), and oh-my-pi's `SessionWriteConflictError` (same name, fields
 * and message) for a compare-and-swap the server refused.
 */

export interface OmpHttpOptions {
  /** The server, e.g. `http://127.0.0.1:8787`. */
  server: string | URL
  /** The bearer token, when the server checks tokens (e.g. `process.env.SESSION_STORE_TOKEN`). */
  token?: string
}

/** A write whose expected size no longer holds (oh-my-pi's error of the same name). */
export class SessionWriteConflictError extends Error {
  readonly path: string
  readonly expectedSize: number | null
  readonly actualSize: number | null

  constructor (path: string, expectedSize: number | null, actualSize: number | null) {
    const expected = expectedSize === null ? 'missing' : `${expectedSize} bytes`
    const actual = actualSize === null ? 'missing' : `${actualSize} bytes`
    super(`Session file changed before rewrite: ${path} (expected ${expected}, found ${actual}).`)
    this.name = 'SessionWriteConflictError'
    this.path = path
    this.expectedSize = expectedSize
    this.actualSize = actualSize
  }
}

/** An answer the backend did not expect: its status and the problem's `SS_` code. */
export class SessionStoreHttpError extends Error {
  readonly status: number
  readonly code: string | undefined

  constructor (request: string, status: number, code: string | undefined, detail: string | undefined) {
    super(`${request}: ${status}${code === undefined ? '' : ` ${code}`}${detail === undefined ? '' : `: ${detail}`}`)
    this.name = 'SessionStoreHttpError'
    this.status = status
    this.code = code
  }
}

/** A listing item, as far as the backend reads it. */
export interface ListedSession { id: string, cwd: string, created: string, modified: string }

const seg = encodeURIComponent

export class OmpHttp {
  readonly #base: string
  readonly #headers: Record<string, string>

  constructor (options: OmpHttpOptions) {
    this.#base = String(options.server).replace(/\/+$/, '')
    this.#headers = options.token === undefined || options.token === '' ? {} : { authorization: `Bearer ${options.token}` }
  }

  /** Every session (unsaved ones included), page by page. */
  async listAll (): Promise<ListedSession[]> {
    const out: ListedSession[] = []
    let cursor: string | null = null
    do {
      const query = new URLSearchParams({ includeEmpty: 'true', limit: '1000', ...(cursor === null ? {} : { cursor }) })
      const page = await (await this.#ok('GET', `/v1/sessions?${query}`)).json() as { sessions: ListedSession[], nextCursor: string | null }
      out.push(...page.sessions)
      cursor = page.nextCursor
    } while (cursor !== null)
    return out
  }

  /** The stored file's size (bytes) and etag, or `undefined` when there is no such session. */
  async head (id: string): Promise<{ size: number, etag: string } | undefined> {
    const res = await this.#ok('HEAD', `/v1/sessions/${seg(id)}/export`, {}, [404])
    if (res.status === 404) return undefined
    return { size: Number(res.headers.get('content-length')), etag: res.headers.get('etag') ?? '' }
  }

  /** The stored file and its etag, or `undefined` when there is no such session. */
  async export (id: string): Promise<{ text: string, etag: string } | undefined> {
    const res = await this.#ok('GET', `/v1/sessions/${seg(id)}/export`, {}, [404])
    if (res.status === 404) return undefined
    return { text: await res.text(), etag: res.headers.get('etag') ?? '' }
  }

  /** `PUT file` under `conditions`: the new etag, or `undefined` on 412. */
  async putFile (id: string, text: string, conditions: Record<string, string>): Promise<string | undefined> {
    const res = await this.#ok('PUT', `/v1/sessions/${seg(id)}/file`, { body: text, headers: { 'content-type': 'application/x-ndjson', ...conditions } }, [412])
    return res.status === 412 ? undefined : res.headers.get('etag') ?? ''
  }

  /** `POST records`: the session's etag after them. */
  async appendRecords (id: string, records: readonly object[]): Promise<string> {
    const res = await this.#ok('POST', `/v1/sessions/${seg(id)}/records`, { body: JSON.stringify({ records }), headers: { 'content-type': 'application/json' } })
    return res.headers.get('etag') ?? ''
  }

  async remove (id: string): Promise<void> {
    await this.#ok('DELETE', `/v1/sessions/${seg(id)}`, {}, [404])
  }

  /** Stores a blob unless the server has it. */
  async putBlob (hash: string, bytes: Uint8Array): Promise<void> {
    const path = `/v1/blobs/sha256/${hash}`
    if ((await this.#ok('HEAD', path, {}, [404])).status === 200) return
    await this.#ok('PUT', path, { body: bytes, headers: { 'content-type': 'application/octet-stream' } })
  }

  async getBlob (hash: string): Promise<Uint8Array | undefined> {
    const res = await this.#ok('GET', `/v1/blobs/sha256/${hash}`, {}, [404])
    return res.status === 404 ? undefined : new Uint8Array(await res.arrayBuffer())
  }

  /** Sends a request; a status other than 2xx and `accept` throws `SessionStoreHttpError`. */
  async #ok (method: string, path: string, init: { body?: string | Uint8Array, headers?: Record<string, string> } = {}, accept: number[] = []): Promise<Response> {
    const body = typeof init.body === 'string' || init.body === undefined ? init.body : new Blob([init.body as Uint8Array<ArrayBuffer>])
    const res = await fetch(this.#base + path, { method, body, headers: { ...this.#headers, ...init.headers } })
    if ((res.status >= 200 && res.status < 300) || accept.includes(res.status)) return res
    let problem: { code?: string, detail?: string } = {}
    try { problem = await res.json() as typeof problem } catch {}
    throw new SessionStoreHttpError(`${method} ${path}`, res.status, problem.code, problem.detail)
  }
}
