// The session's tree beside the conversation: every entry of every branch, one fixed-height
// row each, only the visible rows in the DOM. The active path (root to the session's leaf) is
// marked, the viewed path highlighted, labels shown; choosing a row views that branch.
// Arrow keys, Home and End move between rows; Enter chooses.
import { h, perFrame } from './dom.js'
import { preview } from './session-data.js'

const ROW = 28 // px; also in style.css (.tree-row)
const OVERSCAN = 10

export class TreeView {
  /** @param onChoose (id) => void */
  constructor (scroller, onChoose) {
    this.scroller = scroller
    this.onChoose = onChoose
    this.rows = []
    this.index = new Map()
    this.state = { active: new Set(), viewed: new Set(), chosen: null, leaf: null, labels: new Map(), byId: new Map() }
    this.focusIndex = 0
    this.inner = h('div', { class: 'tree-inner', role: 'tree', 'aria-label': 'Session tree' })
    scroller.replaceChildren(this.inner)
    this.onScroll = perFrame(() => this.render())
    scroller.addEventListener('scroll', this.onScroll, { passive: true })
    // A hidden tree (the phone's Tree tab) has no height to fill: when it is shown again, fill
    // it, with the row last revealed, chosen or focused in view.
    this.height = 0
    this.resized = new ResizeObserver(perFrame(() => {
      const shown = this.height === 0
      this.height = this.scroller.clientHeight
      const row = this.rows[this.focusIndex]
      if (shown && this.height > 0 && row !== undefined) this.reveal(row.id)
      else this.render()
    }))
    this.resized.observe(scroller)
    this.inner.addEventListener('keydown', (event) => this.#key(event))
  }

  /** New rows (SessionData.treeRows) and highlight state. */
  update (rows, state) {
    this.rows = rows
    this.index = new Map(rows.map((row, i) => [row.id, i]))
    this.state = state
    this.inner.style.height = `${rows.length * ROW}px`
    this.render()
  }

  /** Scrolls so that entry `id` is visible. */
  reveal (id) {
    const i = this.index.get(id)
    if (i === undefined) return
    this.focusIndex = i
    const top = i * ROW
    const { scrollTop, clientHeight } = this.scroller
    if (top < scrollTop || top + ROW > scrollTop + clientHeight) this.scroller.scrollTop = Math.max(0, top - clientHeight / 2)
    this.render()
  }

  render () {
    const { scrollTop, clientHeight } = this.scroller
    const start = Math.max(0, Math.floor(scrollTop / ROW) - OVERSCAN)
    const end = Math.min(this.rows.length, Math.ceil((scrollTop + clientHeight) / ROW) + OVERSCAN)
    const hadFocus = this.inner.contains(document.activeElement)
    const els = []
    for (let i = start; i < end; i++) els.push(this.#row(i))
    this.inner.replaceChildren(...els)
    if (hadFocus) this.inner.querySelector(`[data-index="${this.focusIndex}"]`)?.focus()
  }

  #row (i) {
    const { id, depth, forked, fork } = this.rows[i]
    const { active, viewed, chosen, leaf, labels, byId } = this.state
    const entry = byId.get(id)
    const label = labels.get(id)
    const classes = ['tree-row', active.has(id) ? 'active' : '', viewed.has(id) ? 'viewed' : '', id === chosen ? 'chosen' : '', id === leaf ? 'leaf' : '']
    const row = h('button', {
      type: 'button',
      class: classes.filter(Boolean).join(' '),
      role: 'treeitem',
      tabindex: i === this.focusIndex ? '0' : '-1',
      'aria-selected': String(id === chosen),
      'aria-level': String(depth + 1),
      dataset: { id, index: String(i) },
      title: `${entry?.type ?? ''} ${id}${id === leaf ? ' (session leaf)' : ''}`,
      onClick: () => { this.focusIndex = i; this.onChoose(id) },
    },
    h('span', { class: 'glyph', 'aria-hidden': 'true' }, fork ? '◆' : forked ? '├' : '│'),
    h('span', { class: `kind kind-${entry?.type === 'message' ? entry.message?.role : entry?.type}` }, preview(entry)),
    label === undefined ? null : h('span', { class: 'badge' }, label),
    id === leaf ? h('span', { class: 'badge leaf-badge' }, 'leaf') : null)
    // Through the CSSOM: the page's CSP allows no style attributes.
    row.style.top = `${i * ROW}px`
    row.style.paddingLeft = `${8 + depth * 14}px`
    return row
  }

  #key (event) {
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 }
    let next
    if (event.key in moves) next = this.focusIndex + moves[event.key]
    else if (event.key === 'Home') next = 0
    else if (event.key === 'End') next = this.rows.length - 1
    else return
    event.preventDefault()
    this.focusIndex = Math.max(0, Math.min(this.rows.length - 1, next))
    const row = this.rows[this.focusIndex]
    if (row !== undefined) this.reveal(row.id)
    this.inner.querySelector(`[data-index="${this.focusIndex}"]`)?.focus()
  }

  destroy () {
    this.resized.disconnect()
    this.scroller.removeEventListener('scroll', this.onScroll)
  }
}
