/**
 * The CLI's side of a running server (`--server <url>`): the SDK of `src/client/` for import,
 * export and the live entry stream, with its errors turned into `CliError`s that carry the
 * problem's `detail` and `code` (API.md "Conventions").
 */
import { createClient, SessionStoreError, type SessionStoreClient } from '../client/index.js'
import { CliError, codeOf, messageOf, UsageError } from './args.js'

/** What the CLI reports about an imported session (API.md "Session", abridged). */
export interface ImportedSession {
  id: string
  entryCount: number
}

/** The environment variable holding the bearer token sent to `--server` (not a flag: flags show in `ps`). */
export const TOKEN_ENV = 'SESSION_STORE_TOKEN'

/** A running server: its base URL and, when the server checks tokens, the secret to send. */
export interface Server {
  url: string
  token?: string
}

/**
 * The server named by `--server`, with the token of `SESSION_STORE_TOKEN` when set.
 * @throws UsageError unless the URL is http(s).
 */
export function serverOf (raw: string, env: Record<string, string | undefined>): Server {
  const token = env[TOKEN_ENV]
  return { url: parseServerUrl(raw), ...(token === undefined || token === '' ? {} : { token }) }
}

/**
 * The server's base URL from `--server`, without a trailing slash.
 * @throws UsageError unless it is an http(s) URL.
 */
export function parseServerUrl (raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(`--server: not a URL: '${raw}'`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--server: expected an http(s) URL, got '${raw}'`)
  return url.href.replace(/\/+$/, '')
}

/**
 * An SDK client for one `--server`. `call` turns error answers into
 * `CliError('<detail> (HTTP <status> <code>)')` (keeping `code`) and network failures into
 * `CliError('cannot reach <url>: …')`.
 */
export class Remote {
  readonly client: SessionStoreClient

  readonly base: string

  constructor (server: Server) {
    this.base = server.url
    const headers = server.token === undefined ? undefined : { authorization: `Bearer ${server.token}` }
    this.client = createClient({ baseUrl: server.url, ...(headers === undefined ? {} : { headers }) })
  }

  async call<T> (fn: (client: SessionStoreClient) => Promise<T>): Promise<T> {
    try {
      return await fn(this.client)
    } catch (err) {
      throw this.error(err)
    }
  }

  /** `err` as the CLI reports it. */
  error (err: unknown): unknown {
    if (err instanceof SessionStoreError) {
      return Object.assign(new CliError(`${err.detail ?? err.title} (HTTP ${err.status} ${err.code})`), { code: err.code, status: err.status })
    }
    // undici and socket errors: `ECONNREFUSED`, `UND_ERR_CONNECT_TIMEOUT`, …
    const code = codeOf(err)
    if (code !== undefined && /^(E[A-Z]+|UND_ERR_\w+)$/.test(code)) return new CliError(`cannot reach ${this.base}: ${messageOf(err)}`)
    return err
  }

  /** `POST /v1/sessions/import` with the file's text as `application/x-ndjson`. */
  async importJsonl (bytes: Uint8Array, newId: boolean): Promise<ImportedSession> {
    const session = await this.call(async (c) => await c.importSession(new TextDecoder().decode(bytes), { newId }))
    return { id: session.header.id, entryCount: session.entryCount }
  }

  /** `GET /v1/sessions/{id}/export`: the stored file. */
  async exportJsonl (id: string): Promise<Uint8Array> {
    return Buffer.from(await this.call(async (c) => await c.exportSession(id)))
  }

  async close (): Promise<void> { await this.client.close().catch(() => {}) }
}

/** Runs `fn` with a `Remote` for `server`, closing its connections afterwards. */
export async function withRemote<T> (server: Server, fn: (remote: Remote) => Promise<T>): Promise<T> {
  const remote = new Remote(server)
  try {
    return await fn(remote)
  } finally {
    await remote.close()
  }
}
