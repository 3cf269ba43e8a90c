/**
 * The few HTTP calls the fault scenarios make, over undici, with JSON in and out.
 */
import { request } from 'undici'

export interface JsonAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  json: any
}

/** One request; the body (if any) is sent as JSON. Rejects only when the connection fails. */
export async function call (base: string, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string,
  body?: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  const res = await request(base + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.body.text()
  let json: unknown
  try {
    json = text === '' ? undefined : JSON.parse(text)
  } catch {
    json = text
  }
  return { status: res.statusCode, headers: res.headers, json }
}

export interface WireEntry { id: string, parentId: string | null, type: string, [key: string]: unknown }

/** Every entry of a session, page by page; throws when a page does not answer 200. */
export async function allEntries (base: string, id: string): Promise<WireEntry[]> {
  const entries: WireEntry[] = []
  for (let after: number | null = 0; after !== null;) {
    const page = await call(base, 'GET', `/v1/sessions/${id}/entries?after=${after}&limit=1000`)
    if (page.status !== 200) throw new Error(`GET entries of ${id} answered ${page.status}`)
    entries.push(...(page.json.entries as WireEntry[]))
    after = page.json.next as number | null
  }
  return entries
}

export const userMessage = (text: string): Record<string, unknown> =>
  ({ type: 'message', message: { role: 'user', content: text, timestamp: Date.now() } })

export const assistantMessage = (text: string): Record<string, unknown> => ({
  type: 'message',
  message: { role: 'assistant', content: [{ type: 'text', text }], provider: 'p', model: 'm', timestamp: Date.now() },
})
