// The context view: exactly what the model sees at the viewed leaf (GET /context), its state
// (thinking level, models, mode, injected rules) above its messages, one row per message.
import { api, withQuery } from './api.js'
import { h, replace } from './dom.js'
import { message } from './entry-render.js'
import { VirtualList } from './virtual-list.js'

export class ContextView {
  constructor (summary, scroller) {
    this.summary = summary
    this.messages = []
    this.list = new VirtualList(scroller, (i) => message(this.messages[i] ?? {}, {}, { dataset: { index: String(i) } }), { label: 'context messages' })
    this.request = 0
  }

  /** Loads the context of `sessionId` at `leafId` (null: the session's own leaf). */
  async load (sessionId, leafId) {
    const request = ++this.request
    const url = withQuery(`/v1/sessions/${encodeURIComponent(sessionId)}/context`, { leafId: leafId ?? undefined, blobs: 'ref' })
    const context = await api(url)
    if (request !== this.request) return // a newer load won
    const models = Object.entries(context.models ?? {}).map(([role, model]) => `${role}: ${model}`).join(', ') || 'none'
    replace(this.summary,
      h('dl', { class: 'context-state' },
        h('dt', {}, 'leaf'), h('dd', {}, h('code', {}, leafId ?? '(session leaf)')),
        h('dt', {}, 'messages'), h('dd', {}, String(context.messages.length)),
        h('dt', {}, 'thinking level'), h('dd', {}, context.thinkingLevel),
        h('dt', {}, 'models'), h('dd', {}, models),
        h('dt', {}, 'mode'), h('dd', {}, context.mode),
        context.injectedTtsrRules?.length > 0 ? [h('dt', {}, 'injected rules'), h('dd', {}, context.injectedTtsrRules.join(', '))] : null))
    this.messages = context.messages
    this.list.reset(this.messages.length)
    this.summary.dataset.loaded = leafId ?? ''
  }

  destroy () { this.list.destroy() }
}
