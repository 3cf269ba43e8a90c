// Writes one session with every entry kind the given agent's SessionManager can append: both
// message directions with a tool call, an image (externalized when the agent does that), a
// signed thinking block, every state change, a compaction, a label, extension entries and a
// branch with a summary. Returns the ids the caller needs to look at particular leaves.
// Shared by the Node and the Bun reader scripts, so both agents write the same session.

/** An assistant message the way agents record them (usage with every counter). */
function assistant (text, extra = {}) {
  return {
    role: 'assistant',
    content: [{ type: 'text', text }],
    api: 'openai-responses',
    provider: 'openai',
    model: 'gpt-4o',
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: 'stop',
    timestamp: Date.now(),
    ...extra,
  }
}

export async function writeEveryKind (m, image, settle = async () => {}) {
  const ids = {}
  // Each append, then `settle` (a storage that publishes asynchronously confirms it there).
  const step = async (key, append) => {
    ids[key] = append()
    await settle()
  }
  const omp = typeof m.appendTtsrInjection === 'function'
  await step('user', () => m.appendMessage({ role: 'user', content: [{ type: 'text', text: 'Why does upload.test.ts fail?' }, { type: 'image', data: image, mimeType: 'image/png' }], timestamp: Date.now() }))
  await step('assistant', () => m.appendMessage(assistant('Let me look.', {
    content: [
      { type: 'thinking', thinking: 'Check the temp dir.', thinkingSignature: 'sig-abc' },
      { type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'test/upload.test.ts' } },
    ],
    stopReason: 'toolUse',
  })))
  await step('toolResult', () => m.appendMessage({ role: 'toolResult', toolCallId: 'call_1', toolName: 'read', content: [{ type: 'text', text: 'const dir = "/tmp/x"' }], isError: false, timestamp: Date.now() }))
  await step('reply', () => m.appendMessage(assistant('It shares a temp dir.')))
  await step('thinking', () => m.appendThinkingLevelChange('high'))
  await step('model', () => omp ? m.appendModelChange('anthropic/claude-sonnet-4-5', 'smol') : m.appendModelChange('anthropic', 'claude-sonnet-4-5'))
  if (omp) {
    await step('serviceTier', () => m.appendServiceTierChange('priority'))
    await step('ttsr', () => m.appendTtsrInjection(['no-sleep-in-tests']))
    await step('mode', () => m.appendModeChange('review', { strict: true }))
    await step('init', () => m.appendSessionInit({ systemPrompt: 'You review code.', task: 'Review upload.', tools: ['read'] }))
  } else {
    await step('info', () => m.appendSessionInfo('Upload triage'))
  }
  await step('custom', () => m.appendCustomEntry('todo-tracker', { open: 2 }))
  await step('customMessage', () => m.appendCustomMessageEntry('todo-tracker', [{ type: 'text', text: 'Open todos: 2' }, { type: 'image', data: image, mimeType: 'image/png' }], true, { source: 'auto' }))
  await step('label', () => m.appendLabelChange(ids.reply, 'green-tests'))
  await step('user2', () => m.appendMessage({ role: 'user', content: 'Fix it.', timestamp: Date.now() }))
  await step('reply2', () => m.appendMessage(assistant('Fixed.')))
  await step('compaction', () => omp
    ? m.appendCompaction('Traced the failure to a shared temp dir.', 'Upload triage', ids.user2, 1234, { details: { readFiles: ['a'] } })
    : m.appendCompaction('Traced the failure to a shared temp dir.', ids.user2, 1234, { readFiles: ['a'] }))
  await step('afterCompaction', () => m.appendMessage({ role: 'user', content: 'And the other test?', timestamp: Date.now() }))
  await step('afterCompactionReply', () => m.appendMessage(assistant('Also fixed.')))
  // A second branch from the first reply, with a summary of the abandoned path.
  await step('branchSummary', () => m.branchWithSummary(ids.reply, 'Tried mocking the clock; abandoned.', { filesTouched: 1 }))
  await step('branchUser', () => m.appendMessage({ role: 'user', content: 'Try a fresh temp dir instead.', timestamp: Date.now() }))
  await step('branchReply', () => m.appendMessage(assistant('Done with mkdtemp.')))
  return { ids }
}
