/**
 * Sessions for the dashboard's tests and benchmark, made over the HTTP API: a demo session
 * with every kind of entry the page renders (Markdown, thinking, a tool call and its result,
 * an image stored as a blob, model and thinking-level changes, a compaction, a branch summary,
 * a label, two branches), and a long linear session made by import.
 */

export interface Api {
  baseUrl: string
  headers?: Record<string, string>
}

export async function call<T = any> (api: Api, method: string, path: string, body?: unknown, type = 'application/json'): Promise<T> {
  const res = await fetch(`${api.baseUrl}${path}`, {
    method,
    headers: { ...api.headers, ...(body === undefined ? {} : { 'content-type': type }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return (text === '' ? undefined : JSON.parse(text)) as T
}

const text = (t: string) => [{ type: 'text', text: t }]
let clock = Date.parse('2026-03-14T15:04:00.000Z')
const ts = () => (clock += 1000)

export const user = (content: unknown) => ({ type: 'message', message: { role: 'user', content, timestamp: ts() } })
export const assistant = (content: unknown[], usage = { input: 812, output: 57, cost: 0.0026 }) => ({
  type: 'message',
  message: {
    role: 'assistant',
    content,
    provider: 'openai',
    model: 'gpt-4o',
    stopReason: 'stop',
    timestamp: ts(),
    usage: { input: usage.input, output: usage.output, cacheRead: 0, cacheWrite: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: usage.cost } },
  },
})

export interface Demo {
  id: string
  /** Entry ids by name. */
  ids: Record<string, string>
  /** The blob hash of the image. */
  imageHash: string
}

/** Appends and returns the new entries' ids. */
export async function append (api: Api, id: string, entries: unknown[], parentId?: string | null): Promise<string[]> {
  const res = await call<{ entries: Array<{ id: string }> }>(api, 'POST', `/v1/sessions/${id}/entries`, { entries, ...(parentId === undefined ? {} : { parentId }) })
  return res.entries.map((e) => e.id)
}

/** The demo session; `png` is an image's bytes (at least 1 KiB base64, so it is stored as a blob). */
export async function seedDemo (api: Api, id: string, png: Buffer): Promise<Demo> {
  await call(api, 'POST', '/v1/sessions', { cwd: '/work/upload-service', id, title: 'Fix the flaky upload test' })
  const ids: Record<string, string> = {}
  const [question, answer, thinkingChange, modelChange, call1, result1, fix] = await append(api, id, [
    user('Why does `upload.test.ts` fail **about once in ten runs**? The log says:\n\n```\nEEXIST: file already exists, mkdir /tmp/upload\n```'),
    assistant([{ type: 'thinking', thinking: 'Two workers probably share one temp directory.' }, ...text('Let me look at how the test makes its temp directory.')]),
    { type: 'thinking_level_change', thinkingLevel: 'high' },
    { type: 'model_change', model: 'anthropic/claude-sonnet-4-5' },
    assistant([...text('Reading the test.'), { type: 'toolCall', id: 'call-1', name: 'read', arguments: { path: 'test/upload.test.ts' } }], { input: 1904, output: 88, cost: 0.0071 }),
    { type: 'message', message: { role: 'toolResult', toolCallId: 'call-1', toolName: 'read', content: text("const dir = '/tmp/upload'\nawait mkdir(dir)"), isError: false, timestamp: ts() } },
    assistant(text('The test uses a **fixed** path, `/tmp/upload`, so parallel workers collide:\n\n1. worker A creates it\n2. worker B fails with `EEXIST`\n\nUse `mkdtemp` instead.'), { input: 2210, output: 140, cost: 0.0094 }),
  ])
  Object.assign(ids, { question, answer, thinkingChange, modelChange, call1, result1, fix })
  const [screenshot, screenshotReply] = await append(api, id, [
    user([{ type: 'text', text: 'Here is the CI dashboard after the change:' }, { type: 'image', mimeType: 'image/png', data: png.toString('base64') }]),
    assistant(text('All green: **50 runs** without a failure.')),
  ])
  Object.assign(ids, { screenshot, screenshotReply })
  const [label] = await append(api, id, [{ type: 'label', targetId: fix!, label: 'root cause' }])
  ids.label = label!
  // A second branch from the diagnosis: another approach, abandoned with a summary.
  const [retry, retryReply] = await append(api, id, [
    user('Could we mock the clock instead?'),
    assistant(text('Mocking the clock does not help: the collision is on the file system.')),
  ], fix)
  Object.assign(ids, { retry, retryReply })
  const summary = await call<{ entry: { id: string } }>(api, 'POST', `/v1/sessions/${id}/branch-summary`, { fromId: fix, summary: 'Tried mocking the clock; the collision is on the file system, so that was abandoned.' })
  ids.branchSummary = summary.entry.id
  const [compaction, after] = await append(api, id, [
    { type: 'compaction', summary: 'Found that `upload.test.ts` shares `/tmp/upload` between workers; the fix is `mkdtemp`.', firstKeptEntryId: fix, tokensBefore: 48211 },
    user('Write the fix, please.'),
  ])
  Object.assign(ids, { compaction, after })
  const hash = await call<{ hash: string }>(api, 'POST', '/v1/blobs', png, 'application/octet-stream')
  return { id, ids, imageHash: hash.hash }
}

/** A linear session of `count` entries (user and assistant messages in turn), made by one import. */
export async function seedLong (api: Api, id: string, count: number): Promise<string[]> {
  const start = Date.parse('2026-01-01T00:00:00.000Z')
  const lines = [JSON.stringify({ type: 'session', version: 3, id, timestamp: new Date(start).toISOString(), cwd: '/work/long' })]
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const entryId = `e${i.toString(16).padStart(7, '0')}`
    const message = i % 2 === 0
      ? { role: 'user', content: `Question ${i}: what does step ${i} do?`, timestamp: start + i }
      : { role: 'assistant', content: [{ type: 'text', text: `Step ${i} **checks** the result of step ${i - 1}.\n\n- one\n- two` }], provider: 'openai', model: 'gpt-4o', stopReason: 'stop', timestamp: start + i }
    lines.push(JSON.stringify({ type: 'message', id: entryId, parentId: i === 0 ? null : ids[i - 1], timestamp: new Date(start + i).toISOString(), message }))
    ids.push(entryId)
  }
  await call(api, 'POST', '/v1/sessions/import', lines.join('\n') + '\n', 'application/x-ndjson')
  return ids
}
