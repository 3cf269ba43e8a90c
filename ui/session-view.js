// One session: the conversation from the root to the viewed leaf, the tree beside it, the
// context view, and the live tail that keeps all three current. `?entry=<id>` (a search hit)
// opens the session at that entry: its branch shown, scrolled to it and marked.
import { api, withQuery } from './api.js'
import { h, int, perFrame, replace } from './dom.js'
import { ContextView } from './context-view.js'
import { entry as renderEntry } from './entry-render.js'
import { LiveStream, showLiveState } from './live.js'
import { preview, SessionData } from './session-data.js'
import { TreeView } from './tree-view.js'
import { VirtualList } from './virtual-list.js'

const PAGE = 1000

/** The conversation rows of a path: tool results go inside the call they answer. */
function conversationRows (path) {
  const calls = new Set()
  const results = new Map()
  const rows = []
  for (const e of path) {
    if (e.type === 'label') continue // shown in the tree
    const m = e.type === 'message' ? e.message ?? {} : {}
    if (m.role === 'assistant' && Array.isArray(m.content)) for (const b of m.content) if (b?.type === 'toolCall') calls.add(b.id)
    if (m.role === 'toolResult' && calls.has(m.toolCallId) && !results.has(m.toolCallId)) {
      results.set(m.toolCallId, e)
      continue
    }
    rows.push(e)
  }
  return { rows, results }
}

export class SessionView {
  /** @param onUnauthorized (detail) => void: shows the token prompt */
  constructor (main, id, onUnauthorized) {
    Object.assign(this, { main, id, onUnauthorized })
    this.path = `/v1/sessions/${encodeURIComponent(id)}`
    this.data = new SessionData()
    this.chosen = new URL(location.href).searchParams.get('leaf')
    this.target = new URL(location.href).searchParams.get('entry')
    this.found = null
    this.rows = []
    this.results = new Map()
    this.pending = []
    this.applySoon = perFrame(() => this.#apply())
    this.contextSoon = perFrame(() => { if (this.section.dataset.tab === 'context') void this.#loadContext() })
    this.#skeleton()
    this.ready = this.#load()
  }

  #skeleton () {
    const tab = (name, label) => h('button', { type: 'button', class: `tab tab-${name}`, dataset: { tab: name }, onClick: () => this.#tab(name) }, label)
    this.title = h('h1', { class: 'title' }, this.id)
    this.meta = h('p', { class: 'meta' })
    this.viewState = h('div', { class: 'view-state', 'aria-live': 'polite' })
    this.conversation = h('div', { class: 'scroller conversation', tabindex: '0', 'aria-label': 'Conversation' })
    this.empty = h('p', { class: 'empty', hidden: true }, 'No entries on this branch yet.')
    this.contextSummary = h('div', { class: 'context-summary' })
    this.contextScroller = h('div', { class: 'scroller context', tabindex: '0', 'aria-label': 'Context' })
    this.treeScroller = h('div', { class: 'tree-scroller' })
    this.section = h('section', { class: 'session', dataset: { tab: 'conversation' } },
      h('header', { class: 'session-head' }, this.title, this.meta,
        h('div', { class: 'controls' }, h('nav', { class: 'tabs', 'aria-label': 'Views' },
          tab('conversation', 'Conversation'), tab('context', 'Context'), tab('tree', 'Tree')), this.viewState)),
      h('div', { class: 'panes' },
        h('div', { class: 'pane conversation-pane' }, this.empty, this.conversation),
        h('div', { class: 'pane context-pane' }, this.contextSummary, this.contextScroller),
        h('aside', { class: 'pane tree-pane', 'aria-label': 'Tree' }, h('h2', {}, 'Tree'), this.treeScroller)))
    replace(this.main, this.section)
    this.list = new VirtualList(this.conversation, (i) => this.#row(i))
    this.context = new ContextView(this.contextSummary, this.contextScroller)
    this.tree = new TreeView(this.treeScroller, (id) => this.choose(id))
    this.#tab('conversation')
  }

  async #load () {
    try {
      // The session first (small): its entry count plans every page, fetched at once. Entries
      // appended meanwhile come in a further page; a leaf moved meanwhile, on the stream's open.
      this.session = await api(this.path)
      const page = (after) => api(withQuery(`${this.path}/entries`, { after, limit: PAGE, blobs: 'ref' }))
      const pages = []
      for (let after = 0; after < Math.max(1, this.session.entryCount); after += PAGE) pages.push(page(after))
      const loaded = await Promise.all(pages)
      for (const { entries } of loaded) this.data.add(entries)
      for (let { next } = loaded.at(-1); next !== null;) {
        const more = await page(next)
        this.data.add(more.entries)
        next = more.next
      }
    } catch (err) {
      return this.#failed(err)
    }
    this.data.leafId = this.session.leafId
    this.#update(true)
    this.tree.reveal(this.chosen ?? this.data.leafId)
    this.#reveal()
    this.stream = new LiveStream(`${this.path}/events`, { after: this.data.entries.length, blobs: 'ref' }, {
      entry: (e) => { this.pending.push(e); this.applySoon() },
      leaf: ({ leafId }) => { this.pending.push({ leafMove: leafId }); this.applySoon() },
      session: (session) => { this.session = session; this.#head() },
      deleted: () => this.#deleted(),
    }, { probe: () => api(this.path), onRefused: (err) => this.#failed(err), onOpen: () => { void this.#resync() } })
    this.main.dataset.ready = 'true'
    performance.mark('session-ready') // read by bench/ui-open.ts
  }

  #row (i) {
    const el = renderEntry(this.rows[i], { results: this.results })
    if (this.rows[i].id === this.found) {
      el.classList.add('found')
      el.setAttribute('aria-current', 'true')
    }
    return el
  }

  /** Shows the `?entry=` entry: its branch (when it is not on the leaf's), scrolled to and marked. */
  #reveal () {
    const id = this.target
    if (id === null || !this.data.byId.has(id)) return
    if (this.chosen === null && !this.data.path(this.data.leafId).some((e) => e.id === id)) this.choose(id)
    // A tool result is shown inside the call it answers.
    const call = [...this.results].find(([, e]) => e.id === id)?.[0]
    const index = this.rows.findIndex((e) => e.id === id || (call !== undefined && e.type === 'message' &&
      Array.isArray(e.message?.content) && e.message.content.some((b) => b?.type === 'toolCall' && b.id === call)))
    if (index < 0) return
    this.found = this.rows[index].id
    this.list.refresh()
    this.list.scrollToIndex(index)
    this.tree.reveal(id)
  }

  /** After a (re)connection: the header and a leaf moved while we were away. */
  async #resync () {
    const session = await api(this.path).catch(() => undefined)
    if (session === undefined || this.stream?.closed) return
    this.session = session
    // Only a snapshot of exactly the entries we hold can say where the leaf is: an older one
    // would move it back, and newer entries are on their way with their own leaf.
    const current = session.entryCount === this.data.entries.length + this.pending.filter((p) => !('leafMove' in p)).length
    if (current && this.data.byId.has(session.leafId) && session.leafId !== this.data.leafId) {
      this.pending.push({ leafMove: session.leafId })
      this.applySoon()
    }
    this.#head()
  }

  #apply () {
    for (const item of this.pending.splice(0)) {
      if ('leafMove' in item) this.data.leafId = item.leafMove
      else {
        this.data.add([item])
        this.data.leafId = item.id // an append moves the leaf to its last entry
      }
    }
    this.#update(false)
  }

  /** Renders the head, the conversation, the tree and (if shown) the context again. */
  #update (reset) {
    const activePath = this.data.path(this.data.leafId)
    const viewedPath = this.chosen === null ? activePath : this.data.path(this.chosen)
    const { rows, results } = conversationRows(viewedPath)
    const extends_ = !reset && this.rows.length <= rows.length && this.rows.every((r, i) => rows[i] === r)
    const attached = results.size !== this.results.size
    this.rows = rows
    this.results = results
    if (!extends_) this.list.reset(rows.length)
    else {
      this.list.setCount(rows.length)
      if (attached) this.list.refresh()
    }
    this.empty.hidden = rows.length > 0
    const active = new Set(activePath.map((e) => e.id))
    this.tree.update(this.data.treeRows(), {
      active, viewed: this.chosen === null ? active : new Set(viewedPath.map((e) => e.id)), chosen: this.chosen, leaf: this.data.leafId, labels: this.data.labels, byId: this.data.byId,
    })
    this.#head()
    this.contextSoon()
  }

  #head () {
    const header = this.session?.header ?? {}
    const firstUser = this.data.entries.find((e) => e.type === 'message' && e.message?.role === 'user')
    this.title.textContent = header.title ?? (firstUser === undefined ? this.id : preview(firstUser).replace(/^user: /, '').slice(0, 120))
    const t = this.data.totals
    replace(this.meta,
      h('span', { class: 'cwd' }, header.cwd ?? ''),
      h('span', { class: 'counts' }, `${int(this.data.entries.length)} entries · ${int(t.messages)} messages`),
      h('span', { class: 'totals', title: 'Token usage and cost of every assistant message, all branches' },
        `${int(t.input)} in · ${int(t.output)} out · ${int(t.cacheRead)} cache read · $${t.cost.toFixed(4)}`))
    const leaf = this.data.leafId
    replace(this.viewState, this.chosen === null
      ? h('span', { class: 'following' }, 'Following the session leaf')
      : [h('span', {}, 'Viewing another branch: ', h('code', {}, this.chosen)),
          h('button', { type: 'button', onClick: () => this.choose(null) }, 'Back to the session leaf'),
          h('button', { type: 'button', class: 'primary move-leaf', onClick: () => { void this.#moveLeaf() }, disabled: this.chosen === leaf }, 'Make it the session leaf')])
  }

  /** Views the branch ending at `id` (null: follow the session's leaf). */
  choose (id) {
    this.chosen = id === this.data.leafId ? null : id
    const url = new URL(location.href)
    if (this.chosen === null) url.searchParams.delete('leaf')
    else url.searchParams.set('leaf', this.chosen)
    history.replaceState(null, '', url)
    this.#update(true)
  }

  async #moveLeaf () {
    try {
      const { leafId } = await api(`${this.path}/leaf`, { method: 'PUT', body: { leafId: this.chosen } })
      this.data.leafId = leafId
      this.choose(null)
    } catch (err) {
      if (err.status === 401) return this.onUnauthorized(err.message)
      notice(err.status === 403 ? 'Moving the leaf needs a token with the write scope.' : `The leaf did not move: ${err.message}`)
    }
  }

  #tab (name) {
    this.section.dataset.tab = name
    for (const button of this.section.querySelectorAll('.tab')) button.setAttribute('aria-pressed', String(button.dataset.tab === name))
    if (name === 'context') void this.#loadContext()
  }

  async #loadContext () {
    try {
      await this.context.load(this.id, this.chosen ?? this.data.leafId)
    } catch (err) {
      this.#failed(err)
    }
  }

  #deleted () {
    this.stream?.close()
    showLiveState('offline')
    notice('This session was deleted.')
  }

  #failed (err) {
    if (err.status === 401) return this.onUnauthorized(err.message)
    if (err.status === 404) {
      replace(this.main, h('section', { class: 'prompt' }, h('h1', {}, 'Session not found'),
        h('p', {}, 'No session ', h('code', {}, this.id), ' here (or not for this token).'), h('a', { href: '/ui/', dataset: { nav: '' } }, 'All sessions')))
      return
    }
    notice(`Something went wrong: ${err.message}`)
  }

  destroy () {
    this.stream?.close()
    this.list.destroy()
    this.context.destroy()
    this.tree.destroy()
  }
}

/** A message in the page's alert line. */
export function notice (text) {
  const el = document.getElementById('notice')
  el.textContent = text
  el.hidden = text === ''
}
