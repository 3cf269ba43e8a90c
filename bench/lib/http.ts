/**
 * HTTP helpers of the benchmarks (through Node's global fetch, i.e. undici): sessions, appends
 * and the payloads every benchmark shares.
 */

/** Sends JSON and resolves the parsed answer; throws on an unexpected status. */
export async function json<T> (url: string, init: { method?: string, body?: unknown, expect?: number } = {}): Promise<T> {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : (typeof init.body === 'string' ? init.body : JSON.stringify(init.body)),
  })
  const text = await res.text()
  if (res.status !== (init.expect ?? res.status) || res.status >= 400) {
    throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 300)}`)
  }
  return (text === '' ? undefined : JSON.parse(text)) as T
}

/**
 * The JSON text of a `message` append whose body is exactly `bytes` bytes (ASCII), with
 * `marker` at the start of its text (e.g. a send time for latency measurements).
 */
export function messageBody (bytes = 1024, marker = ''): string {
  const shell = (text: string): string => JSON.stringify({
    type: 'message', message: { role: 'user', content: [{ type: 'text', text }] },
  })
  const fill = Math.max(0, bytes - shell(marker).length)
  return shell(marker + 'x'.repeat(fill))
}

/** An assistant message: the first one ends the deferral rule (SPEC.md §8.3), so appends are durable. */
export const ASSISTANT = { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }], provider: 'bench', model: 'bench' } }

export interface AppendAnswer { firstSeq: number, lastSeq: number, persisted: boolean, entries: Array<{ id: string }> }

/** Creates a session of `cwd` and makes it durable (one assistant message); resolves its id. */
export async function createDurableSession (baseUrl: string, cwd: string): Promise<string> {
  const session = await json<{ header: { id: string } }>(`${baseUrl}/v1/sessions`, { body: { cwd }, expect: 201 })
  const id = session.header.id
  const first = await json<AppendAnswer>(`${baseUrl}/v1/sessions/${id}/entries`, { body: ASSISTANT, expect: 201 })
  if (!first.persisted) throw new Error('the first assistant message did not make the session durable')
  return id
}
