// One entry (or one context message) as an element for reading: roles, Markdown text,
// thinking and tool calls collapsed (a call holds its result), images, marked summaries, and
// small markers for model, thinking-level and other state changes.
import { imageUrl } from './api.js'
import { clock, h, int } from './dom.js'
import { renderMarkdown } from './markdown.js'

const ROLE_NAMES = {
  user: 'User',
  assistant: 'Assistant',
  toolResult: 'Tool result',
  developer: 'Developer',
  custom: 'Extension',
  bashExecution: 'Shell',
  pythonExecution: 'Python',
  fileMention: 'Files',
  hookMessage: 'Hook',
  branchSummary: 'Branch summary',
  compactionSummary: 'Compaction summary',
}

/** A <details> that starts closed. */
const fold = (summary, ...body) => h('details', { class: 'fold' }, h('summary', {}, summary), ...body)

const json = (value) => h('pre', { class: 'json' }, h('code', {}, JSON.stringify(value, null, 2) ?? String(value)))

function image (block) {
  const img = h('img', { class: 'image', alt: `image (${block.mimeType ?? 'unknown type'})`, loading: 'lazy', decoding: 'async' })
  if (typeof block.data === 'string') {
    imageUrl(block.data, block.mimeType).then((url) => { img.src = url }, () => { img.alt = 'image not available' })
  }
  return img
}

/** A short one-line view of tool arguments. */
function argsLine (args) {
  if (args === undefined || args === null) return ''
  const text = typeof args === 'string' ? args : JSON.stringify(args)
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}

/** Content: a string (Markdown) or an array of blocks. */
export function content (value, ctx) {
  if (typeof value === 'string') return h('div', { class: 'md' }, renderMarkdown(value))
  if (!Array.isArray(value)) return value === undefined ? null : json(value)
  return value.map((block) => contentBlock(block, ctx))
}

function contentBlock (block, ctx) {
  switch (block?.type) {
    case 'text': return h('div', { class: 'md' }, renderMarkdown(block.text ?? ''))
    case 'thinking': return fold(h('span', { class: 'tag thinking' }, 'Thinking'), h('div', { class: 'md muted' }, renderMarkdown(block.thinking ?? '')))
    case 'image': return image(block)
    case 'toolCall': return toolCall(block, ctx)
    default: return fold(h('span', { class: 'tag' }, block?.type ?? 'block'), json(block))
  }
}

function toolCall (block, ctx) {
  const result = ctx?.results?.get(block.id)
  const status = result === undefined
    ? h('span', { class: 'tag pending' }, 'no result yet')
    : result.message.isError === true ? h('span', { class: 'tag error' }, 'error') : h('span', { class: 'tag ok' }, 'done')
  return h('details', { class: 'fold tool', dataset: { toolCall: block.id ?? '' } },
    h('summary', {}, h('span', { class: 'tag tool' }, block.name ?? 'tool'), ' ', h('code', { class: 'args' }, argsLine(block.arguments)), ' ', status),
    h('div', { class: 'tool-body' },
      h('div', { class: 'label' }, 'Arguments'), json(block.arguments),
      result === undefined ? null : [h('div', { class: 'label' }, 'Result'), h('div', { class: 'result' }, content(result.message.content, ctx))]))
}

function usageLine (message) {
  const u = message.usage
  if (u === undefined || u === null) return null
  const cost = u.cost?.total
  return h('span', { class: 'usage' }, `${int(u.input ?? 0)} in · ${int(u.output ?? 0)} out` +
    (u.cacheRead ? ` · ${int(u.cacheRead)} cached` : '') + (typeof cost === 'number' ? ` · $${cost.toFixed(4)}` : ''))
}

/** A message (an entry's, or one of the context) as a block with a role header. */
export function message (msg, ctx, meta = {}) {
  const role = msg.role ?? 'unknown'
  const model = role === 'assistant' && msg.model !== undefined ? `${msg.provider ?? ''}/${msg.model}` : null
  let body
  if (role === 'bashExecution' || role === 'pythonExecution') {
    body = fold(h('code', {}, msg.command ?? msg.code ?? ''), h('pre', {}, h('code', {}, String(msg.output ?? ''))),
      msg.exitCode === undefined ? null : h('div', { class: 'label' }, `exit code ${msg.exitCode}`))
  } else if (role === 'toolResult') {
    body = fold(h('span', {}, h('span', { class: 'tag tool' }, msg.toolName ?? 'tool'), ' result'), content(msg.content, ctx))
  } else if (role === 'branchSummary' || role === 'compactionSummary') {
    body = h('div', { class: 'md' }, renderMarkdown(msg.summary ?? ''))
  } else {
    body = content(msg.content, ctx)
  }
  return h('article', { class: `entry msg role-${role}`, dataset: { role, ...meta.dataset } },
    h('header', {},
      h('span', { class: 'role' }, ROLE_NAMES[role] ?? role),
      model === null ? null : h('span', { class: 'model' }, model),
      msg.stopReason === 'error' || msg.stopReason === 'aborted' ? h('span', { class: 'tag error' }, msg.stopReason) : null,
      usageLine(msg),
      h('time', {}, clock(meta.timestamp ?? msg.timestamp))),
    h('div', { class: 'body' }, body))
}

const marker = (entry, kind, ...text) => h('div', { class: `entry marker ${kind}`, dataset: { id: entry.id, type: entry.type } },
  h('span', { class: 'marker-text' }, ...text), h('time', {}, clock(entry.timestamp)))

const boxed = (entry, kind, title, ...body) => h('article', { class: `entry boxed ${kind}`, dataset: { id: entry.id, type: entry.type } },
  h('header', {}, h('span', { class: 'role' }, title), h('time', {}, clock(entry.timestamp))), h('div', { class: 'body' }, ...body))

/** An entry of the conversation. `ctx.results` maps tool call ids to their result entries. */
export function entry (e, ctx) {
  switch (e.type) {
    case 'message': return message(e.message ?? {}, ctx, { timestamp: e.timestamp, dataset: { id: e.id, type: e.type } })
    case 'model_change': return marker(e, 'model', 'model → ', h('strong', {}, e.model ?? `${e.provider ?? ''}/${e.modelId ?? ''}`), e.role !== undefined && e.role !== 'default' ? ` (${e.role})` : '')
    case 'thinking_level_change': return marker(e, 'thinking', 'thinking level → ', h('strong', {}, e.thinkingLevel ?? 'off'))
    case 'mode_change': return marker(e, 'mode', 'mode → ', h('strong', {}, e.mode ?? 'none'))
    case 'label': return marker(e, 'label', 'label ', h('strong', {}, e.label || '(cleared)'), ` on ${e.targetId}`)
    case 'ttsr_injection': return marker(e, 'rules', 'rules injected: ', (e.injectedRules ?? []).join(', '))
    case 'compaction':
      return boxed(e, 'compaction', 'Compaction', h('p', { class: 'muted' }, `${int(e.tokensBefore ?? 0)} tokens before; summary:`),
        h('div', { class: 'md' }, renderMarkdown(e.summary ?? '')))
    case 'branch_summary':
      return boxed(e, 'branch-summary', 'Branch summary', h('p', { class: 'muted' }, `from ${e.fromId}`), h('div', { class: 'md' }, renderMarkdown(e.summary ?? '')))
    case 'custom_message':
      return boxed(e, 'custom-message', `Extension message · ${e.customType ?? ''}`, content(e.content, ctx))
    case 'session_init':
      return boxed(e, 'session-init', 'Session start', fold('System prompt', h('div', { class: 'md' }, renderMarkdown(e.systemPrompt ?? ''))),
        h('div', { class: 'md' }, renderMarkdown(e.task ?? '')), h('p', { class: 'muted' }, `tools: ${(e.tools ?? []).join(', ')}`))
    default: return marker(e, 'other', fold(h('span', { class: 'tag' }, e.type), json(e)))
  }
}
