/**
 * Sessions written through the HTTP API open in both published agents' readers: every entry
 * kind, images stored as blobs, a branch with its summary, both kinds of fork. The service is
 * restarted before comparing, so that it serves what is on disk, as the readers do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectReaderAgrees } from './compare.js'
import { allEntries, fileOf, http, listWith, READER_NAMES, sampleImage, startDiskServer, type DiskServer, type Json } from './support.js'

const IMAGE = sampleImage()

const user = (content: unknown): Json => ({ type: 'message', message: { role: 'user', content, timestamp: 1773500649000 } })
const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }
const assistant = (content: unknown[], extra: Json = {}): Json => ({
  type: 'message',
  message: { role: 'assistant', content, provider: 'openai', model: 'gpt-4o', usage, stopReason: 'stop', timestamp: 1773500649400, ...extra },
})

describe('compat: sessions written over HTTP open in the agents', () => {
  let server: DiskServer
  const ids: Record<string, string> = {}
  const entryIds: Record<string, string> = {}

  beforeAll(async () => {
    let s = await startDiskServer()
    const { app } = s
    const created = await http(app, 'POST', '/v1/sessions', { cwd: '/work/demo', title: 'Upload triage' })
    expect(created.status, created.raw).toBe(201)
    const id = ids.main = created.body.header.id
    const dataUrl = `data:image/png;base64,${IMAGE}`
    const urlBlob = await http(app, 'POST', '/v1/blobs', Buffer.from(dataUrl, 'utf8'), { 'content-type': 'application/octet-stream' })
    expect(urlBlob.status, urlBlob.raw).toBe(201)
    const batch = await http(app, 'POST', `/v1/sessions/${id}/entries`, {
      entries: [
        user([{ type: 'text', text: 'Why does upload.test.ts fail?' }, { type: 'image', data: IMAGE, mimeType: 'image/png' }]),
        assistant([
          { type: 'thinking', thinking: 'Check the temp dir.', thinkingSignature: 'sig-abc' },
          { type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'test/upload.test.ts' } },
        ], { stopReason: 'toolUse' }),
        { type: 'message', message: { role: 'toolResult', toolCallId: 'call_1', toolName: 'read', content: [{ type: 'text', text: 'const dir = "/tmp/x"' }], isError: false, timestamp: 1773500649500 } },
        assistant([{ type: 'text', text: 'It shares a temp dir.' }], { providerPayload: { type: 'openaiResponsesHistory', provider: 'openai', items: [{ type: 'input_image', image_url: urlBlob.body.ref }] } }),
        { type: 'thinking_level_change', thinkingLevel: 'high' },
        { type: 'model_change', model: 'anthropic/claude-sonnet-4-5', role: 'smol' },
        { type: 'service_tier_change', serviceTier: 'priority' },
        { type: 'ttsr_injection', injectedRules: ['no-sleep-in-tests'] },
        { type: 'mode_change', mode: 'review', data: { strict: true } },
        { type: 'session_init', systemPrompt: 'You review code.', task: 'Review upload.', tools: ['read'] },
        { type: 'custom', customType: 'todo-tracker', data: { open: 2 } },
        { type: 'custom_message', customType: 'todo-tracker', content: [{ type: 'text', text: 'Open todos: 2' }, { type: 'image', data: IMAGE, mimeType: 'image/png' }], display: true, details: { source: 'auto' } },
        { type: 'some_future_kind', payload: { any: 'shape' } },
        user('Fix it.'),
        // The README's own example: an assistant message without usage.
        { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'Fixed.' }], provider: 'openai', model: 'gpt-4o' } },
        // Every other usage record the omp reader sums while indexing, partial here, and a failed
        // turn with redacted thinking (trimmed while it builds the context).
        assistant([{ type: 'toolCall', id: 'call_2', name: 'task', arguments: { goal: 'rerun the suite' } }], { stopReason: 'toolUse' }),
        { type: 'message', message: { role: 'toolResult', toolCallId: 'call_2', toolName: 'task', content: [{ type: 'text', text: 'green' }], details: { usage: { input: 7, output: 3 } }, isError: false, timestamp: 1773500649600 } },
        { type: 'model_usage', usage: { input: 2, output: 1 } },
        assistant([{ type: 'redactedThinking', data: 'opaque' }, { type: 'text', text: 'Retrying.' }], { stopReason: 'error', errorMessage: 'overloaded' }),
      ],
    })
    expect(batch.status, batch.raw).toBe(201)
    const e = batch.body.entries as Json[]
    entryIds.reply = e[3]!.id as string
    entryIds.fixIt = e[13]!.id as string
    const label = await http(app, 'POST', `/v1/sessions/${id}/entries`, { type: 'label', targetId: entryIds.reply, label: 'green-tests' })
    expect(label.status, label.raw).toBe(201)
    const more = await http(app, 'POST', `/v1/sessions/${id}/entries`, {
      entries: [
        { type: 'compaction', summary: 'Traced the failure to a shared temp dir.', shortSummary: 'Upload triage', firstKeptEntryId: entryIds.fixIt, tokensBefore: 1234 },
        user('And the other test?'),
        assistant([{ type: 'thinking', thinking: 'Long one.', thinkingSignature: 's'.repeat(600_000) }, { type: 'text', text: 'Also fixed.' }]),
      ],
    })
    expect(more.status, more.raw).toBe(201)
    entryIds.last = (more.body.entries as Json[])[2]!.id as string
    const summary = await http(app, 'POST', `/v1/sessions/${id}/branch-summary`, { fromId: entryIds.reply, summary: 'Tried mocking the clock; abandoned.', details: { filesTouched: 1 } })
    expect(summary.status, summary.raw).toBe(201)
    const branch = await http(app, 'POST', `/v1/sessions/${id}/entries`, { entries: [user('Try a fresh temp dir.'), assistant([{ type: 'text', text: 'Done with mkdtemp.' }])] })
    expect(branch.status, branch.raw).toBe(201)
    entryIds.branchLeaf = (branch.body.entries as Json[])[1]!.id as string

    const fork = await http(app, 'POST', `/v1/sessions/${id}/fork`, {})
    expect(fork.status, fork.raw).toBe(201)
    ids.fork = fork.body.header.id
    const branched = await http(app, 'POST', `/v1/sessions/${id}/fork`, { leafId: entryIds.last })
    expect(branched.status, branched.raw).toBe(201)
    ids.branched = branched.body.header.id

    await s.stop()
    s = await startDiskServer(s.dataDir)
    server = s
  }, 120_000)
  afterAll(async () => { await server?.cleanup() })

  for (const reader of READER_NAMES) {
    it(`every entry kind, blobs and a branch summary open in ${reader}, with the same entries, tree and context`, async () => {
      const { view } = await expectReaderAgrees(server.app, server.dataDir, ids.main!, reader, [entryIds.last!, entryIds.reply!, entryIds.branchLeaf!, null])
      expect(view.entries.map((e) => e.type)).toContain('some_future_kind')
      expect(view.entries.map((e) => e.type)).toContain('branch_summary')
      expect(view.entries.map((e) => e.type)).toContain('model_usage')
      // The signature over the size limit reaches the agent whole.
      const signed = view.entries.find((e) => e.id === entryIds.last)!
      expect((((signed.message as Json).content as Json[])[0]!.thinkingSignature as string).length).toBe(600_000)
    }, 120_000)

    it(`${reader} lists every session written here for its cwd`, async () => {
      expect(await listWith(reader, server.dataDir, '/work/demo')).toEqual([ids.main!, ids.fork!, ids.branched!].sort())
    }, 120_000)

    it(`a fork and a branched session open in ${reader}`, async () => {
      await expectReaderAgrees(server.app, server.dataDir, ids.fork!, reader)
      await expectReaderAgrees(server.app, server.dataDir, ids.branched!, reader)
    }, 120_000)
  }

  it('serves the context the readers build, with serviceTier and data URLs resolved', async () => {
    const tiered = await http(server.app, 'GET', `/v1/sessions/${ids.main}/context?leafId=${entryIds.last}`)
    expect(tiered.body.serviceTier).toEqual({ openai: 'priority', anthropic: 'priority', google: 'priority' })
    const context = await http(server.app, 'GET', `/v1/sessions/${ids.main}/context?leafId=${entryIds.branchLeaf}`)
    const reply = (context.body.messages as Json[]).find((m) => m.providerPayload !== undefined)
    expect(reply?.providerPayload).toMatchObject({ items: [{ image_url: `data:image/png;base64,${IMAGE}` }] })
  })

  it('never names a server path in a fork header', async () => {
    for (const id of [ids.fork!, ids.branched!]) {
      const session = await http(server.app, 'GET', `/v1/sessions/${id}`)
      expect(session.body.header.parentSession).toBe(ids.main)
      expect(JSON.stringify(session.body)).not.toContain(server.dataDir)
    }
    const entries = await allEntries(server.app, ids.branched!)
    expect(entries.length).toBeGreaterThan(0)
    expect(fileOf(server.dataDir, ids.branched!)).toContain(server.dataDir)
  })
})
