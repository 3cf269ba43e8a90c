/** Requests to a server process of the two-server suites, answered as status, headers and body. */
import { request } from 'undici'

export interface Answer { status: number, body: any, headers: Record<string, unknown>, etag: string | undefined }

/** `method path` on `base`, with `body` as JSON; a JSON answer is parsed, any other kept as text. */
export async function call (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.body.text()
  const etag = res.headers.etag
  return {
    status: res.statusCode,
    body: /[/+]json\b/.test(String(res.headers['content-type'])) ? JSON.parse(text) : text,
    headers: res.headers,
    etag: typeof etag === 'string' ? etag : undefined,
  }
}
