/**
 * One check, used in both directions: a reader's view of a session file against what the
 * service serves for that session (entries, ids, parents, leaf, tree and context).
 *
 * Where the readers knowingly differ from the service (docs/compatibility.md), the comparison
 * says so here and nowhere else:
 * - `@mariozechner/pi-coding-agent` has no blob store: it sees the `blob:sha256:` refs of the
 *   file, which `withBlobsOf` resolves from the data directory's blobs before comparing. Its
 *   context is `{messages, thinkingLevel, model}`, and its synthetic messages carry no
 *   `attribution` / `shortSummary`.
 * - `@oh-my-pi/pi-coding-agent` filters what it replays to a model (aborted and failed turns,
 *   tool calls whose result is not on the path); the service returns the path as stored
 *   (SPEC.md §7.2), so `replayFilter` applies those two rules before comparing.
 */
import { expect } from 'vitest'
import type { App } from '../../src/app.js'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { allEntries, fileOf, http, readerTree, readWith, serviceTree, wire, type Json, type ReaderName, type ReaderView } from './support.js'

const OMP_CONTEXT_KEYS = ['messages', 'thinkingLevel', 'models', 'injectedTtsrRules', 'mode', 'modeData', 'serviceTier']

export interface Agreement {
  view: ReaderView
  entries: Json[]
}

/**
 * Opens the session's file (a copy) with `reader` and expects it to agree with the service:
 * the same entries in the same order (so the same ids and parents), the same leaf (the last
 * entry: a reader never sees a leaf that is not on disk), the same tree and labels, and the
 * same context at the leaf and at each of `leaves`.
 */
export async function expectReaderAgrees (app: App, dataDir: string, id: string, reader: ReaderName, leaves: Array<string | null> = []): Promise<Agreement> {
  const file = fileOf(dataDir, id)
  const read = await readWith(reader, dataDir, file, leaves)
  const view = reader === 'pi' ? withBlobsOf(dataDir, read) : read
  return { view, entries: await expectViewAgrees(app, id, reader, view, leaves) }
}

/**
 * `view` (what `reader` sees in session `id`'s file) against what the service serves for `id`:
 * the same entries, leaf, tree and labels, and context at the leaf and at each of `leaves`.
 * Returns the service's entries.
 */
export async function expectViewAgrees (app: App, id: string, reader: ReaderName, view: ReaderView, leaves: Array<string | null> = []): Promise<Json[]> {
  const entries = await allEntries(app, id)
  expect(view.header.id).toBe(id)
  expect(wire(view.entries)).toEqual(entries)

  const session = await http(app, 'GET', `/v1/sessions/${id}`)
  expect(view.leafId).toBe(session.body.leafId)
  const tree = await serviceTree(app, id)
  const theirs = readerTree(view)
  expect(theirs.roots).toEqual(tree.roots)
  expect(theirs.children).toEqual(tree.children)
  expect(theirs.labels).toEqual(tree.labels)

  await expectSameContext(app, id, reader, undefined, view.context)
  for (const leaf of leaves) await expectSameContext(app, id, reader, leaf, view.contexts[String(leaf)]!)
  return entries
}

async function expectSameContext (app: App, id: string, reader: ReaderName, leaf: string | null | undefined, theirs: Json): Promise<void> {
  const query = typeof leaf === 'string' ? `leafId=${leaf}` : ''
  let ours: Json
  if (leaf === null) {
    ours = { messages: [], thinkingLevel: 'off', models: {}, injectedTtsrRules: [], mode: 'none' }
  } else {
    const res = await http(app, 'GET', `/v1/sessions/${id}/context${query === '' ? '' : `?${query}`}`)
    expect(res.status, res.raw).toBe(200)
    ours = res.body
  }
  if (reader === 'omp') {
    expect(pick(wire(theirs), OMP_CONTEXT_KEYS)).toEqual(pick({ ...ours, messages: replayFilter(ours.messages as Json[]) }, OMP_CONTEXT_KEYS))
  } else {
    expect(wire(theirs.messages)).toEqual((ours.messages as Json[]).map(olderMessage))
  }
}

function pick (value: Json, keys: string[]): Json {
  const out: Json = {}
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key]
  return out
}

/** A synthetic message as the older reader builds it: no `attribution`, no `shortSummary`. */
function olderMessage (message: Json): Json {
  if (message.role === 'custom') {
    const { attribution: _a, ...rest } = message
    return rest
  }
  if (message.role === 'compactionSummary') {
    const { shortSummary: _s, ...rest } = message
    return rest
  }
  return message
}

/**
 * The two replay rules of the newer reader: assistant turns that were aborted or failed are
 * dropped with their tool results, and tool calls without a result on the path are stripped
 * (their turn's thinking signatures cleared, redacted thinking dropped; an emptied turn goes).
 */
export function replayFilter (messages: Json[]): Json[] {
  let out = messages.slice()
  const results = new Set(out.filter((m) => m.role === 'toolResult').map((m) => m.toolCallId))
  for (let i = out.length - 1; i >= 0; i--) {
    const m = out[i]!
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue
    const blocks = m.content as Json[]
    const dangling = blocks.filter((b) => b.type === 'toolCall' && !results.has(b.id)).length
    if (dangling === 0) continue
    const content = blocks
      .filter((b) => !(b.type === 'toolCall' && !results.has(b.id)) && b.type !== 'redactedThinking')
      .map((b) => (b.type === 'thinking' && typeof b.thinkingSignature === 'string' && b.thinkingSignature !== '' ? { ...b, thinkingSignature: undefined } : b))
    if (content.length === 0) out.splice(i, 1)
    else out[i] = wire({ ...m, content })
  }
  for (let i = out.length - 1; i >= 0; i--) {
    const m = out[i]!
    if (m.role !== 'assistant' || (m.stopReason !== 'aborted' && m.stopReason !== 'error')) continue
    const calls = new Set((Array.isArray(m.content) ? m.content as Json[] : []).filter((b) => b.type === 'toolCall').map((b) => b.id))
    out.splice(i, 1)
    out = out.filter((r, j) => j < i || r.role !== 'toolResult' || !calls.has(r.toolCallId))
  }
  return out
}

/**
 * `view` with every blob ref replaced by what the data directory's blob holds: base64 for image
 * data, UTF-8 for an `image_url` (what a reader with a blob store would have shown).
 */
function withBlobsOf<T> (dataDir: string, view: T): T {
  const resolve = (value: unknown, key: string | undefined): unknown => {
    if (typeof value === 'string') {
      const m = /^blob:sha256:([0-9a-f]{64})$/.exec(value)
      if (m === null) return value
      const bytes = readFileSync(join(dataDir, 'blobs', m[1]!))
      return key === 'image_url' ? bytes.toString('utf8') : bytes.toString('base64')
    }
    if (Array.isArray(value)) return value.map((v) => resolve(v, key))
    if (typeof value !== 'object' || value === null) return value
    const out: Json = {}
    for (const [k, v] of Object.entries(value)) out[k] = resolve(v, k)
    return out
  }
  return resolve(view, undefined) as T
}
