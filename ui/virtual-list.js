// A list that keeps in the DOM only the rows near the viewport of its scrolling element, so a
// 10,000-entry session costs as much to show as a 30-entry one. Rows have any height: each
// rendered row is measured (ResizeObserver: text, opened <details>, loaded images) and unmeasured
// rows count as the average so far. The reader's place is kept while heights change and rows
// are added: the first visible row stays where it was, unless the reader was at the bottom, in
// which case the list follows new rows.
import { h, perFrame } from './dom.js'

const BOTTOM_SLACK = 8 // px from the end that still counts as "at the bottom"

export class VirtualList {
  /**
   * @param scroller the element that scrolls (overflow: auto)
   * @param render (index) => Element, the row at `index`
   * @param options.overscan px rendered above and below the viewport
   */
  constructor (scroller, render, { overscan = 600, label = 'entries' } = {}) {
    this.scroller = scroller
    this.renderRow = render
    this.overscan = overscan
    this.count = 0
    this.heights = new Float64Array(0) // px; 0 = not measured yet
    this.measured = { sum: 0, n: 0 }
    this.offsets = new Float64Array(1)
    this.dirty = false
    this.rows = new Map() // index → element, a contiguous range
    this.range = [0, -1]
    this.anchor = { index: 0, delta: 0 }
    this.stick = true
    this.expectedTop = undefined
    this.top = h('div', { class: 'vl-spacer', 'aria-hidden': 'true' })
    this.body = h('div', { class: 'vl-rows', role: 'list', 'aria-label': label })
    this.bottom = h('div', { class: 'vl-spacer', 'aria-hidden': 'true' })
    scroller.replaceChildren(this.top, this.body, this.bottom)
    this.observer = new ResizeObserver((entries) => this.#measured(entries))
    this.viewportObserver = new ResizeObserver(perFrame(() => this.#render(this.#target())))
    this.viewportObserver.observe(scroller)
    const renderSoon = perFrame(() => this.#render(this.scroller.scrollTop))
    // The place is captured at once (a row measured before the next frame must not move the
    // reader back); rendering waits for the frame.
    this.onScroll = () => {
      // The scroll we caused ourselves says nothing about where the reader wants to be.
      const ours = this.expectedTop !== undefined && Math.abs(this.scroller.scrollTop - this.expectedTop) < 1
      this.expectedTop = undefined
      if (ours) return
      this.#capture()
      renderSoon()
    }
    scroller.addEventListener('scroll', this.onScroll, { passive: true })
  }

  /** The list now has `count` rows; rows below the old count are new. */
  setCount (count) {
    this.count = count
    for (const el of this.rows.values()) el.setAttribute('aria-setsize', String(count))
    if (count > this.heights.length) {
      const heights = new Float64Array(Math.max(count, this.heights.length * 2))
      heights.set(this.heights)
      this.heights = heights
    }
    this.dirty = true
    this.#render(this.#target())
  }

  /** A new list of `count` rows (another branch): forget every height, show the end. */
  reset (count) {
    for (const el of this.rows.values()) this.observer.unobserve(el)
    this.rows.clear()
    this.body.replaceChildren()
    this.range = [0, -1]
    this.heights = new Float64Array(0)
    this.measured = { sum: 0, n: 0 }
    this.stick = true
    this.setCount(count)
  }

  /** Renders the visible rows again (their data changed). */
  refresh () {
    for (const [index, el] of this.rows) {
      const fresh = this.#make(index)
      this.observer.unobserve(el)
      el.replaceWith(fresh)
      this.rows.set(index, fresh)
    }
  }

  /** Whether the reader is at the end of the list (new rows will scroll into view). */
  get following () { return this.stick }

  scrollToBottom () {
    this.stick = true
    this.#render(this.#target())
  }

  /** Shows row `index` near the top of the viewport and keeps it there while heights settle. */
  scrollToIndex (index) {
    this.#layout()
    this.stick = false
    this.anchor = { index: Math.max(0, Math.min(index, this.count - 1)), delta: -Math.min(80, this.scroller.clientHeight / 4) }
    this.#render(this.#target())
  }

  /** Indexes of the rows in the DOM. */
  get renderedRange () { return [...this.range] }

  destroy () {
    this.observer.disconnect()
    this.viewportObserver.disconnect()
    this.scroller.removeEventListener('scroll', this.onScroll)
  }

  #layout () {
    if (!this.dirty) return
    const offsets = new Float64Array(this.count + 1)
    const estimate = this.measured.n === 0 ? 120 : this.measured.sum / this.measured.n
    for (let i = 0; i < this.count; i++) offsets[i + 1] = offsets[i] + (this.heights[i] > 0 ? this.heights[i] : estimate)
    this.offsets = offsets
    this.dirty = false
  }

  /** The last row starting at or above `y`. */
  #indexAt (y) {
    let lo = 0
    let hi = this.count - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.offsets[mid] <= y) lo = mid
      else hi = mid - 1
    }
    return Math.max(0, lo)
  }

  /**
   * Remembers which row is at the top and whether the reader is at the bottom: at the end of
   * the rows as rendered, or as last measured. A row that grew (an image loading) and was not
   * measured yet makes the rendered end lower than the reader's; one that shrank, the reverse.
   * Either way a reader who was at the end still is.
   */
  #capture () {
    this.#layout()
    const { scrollTop, clientHeight, scrollHeight } = this.scroller
    this.stick = scrollTop + clientHeight >= Math.min(scrollHeight, this.offsets[this.count]) - BOTTOM_SLACK
    const index = this.#indexAt(scrollTop)
    this.anchor = { index, delta: scrollTop - this.offsets[index] }
  }

  /** Where the viewport should be: the end when following, else the anchor row's place. */
  #target () {
    this.#layout()
    const total = this.offsets[this.count]
    if (this.stick) return Math.max(0, total - this.scroller.clientHeight)
    return Math.max(0, Math.min(this.offsets[Math.min(this.anchor.index, this.count)] + this.anchor.delta, total))
  }

  #make (index) {
    const el = this.renderRow(index)
    el.dataset.vindex = String(index)
    el.setAttribute('role', 'listitem')
    el.setAttribute('aria-posinset', String(index + 1))
    el.setAttribute('aria-setsize', String(this.count))
    this.observer.observe(el)
    return el
  }

  #render (scrollTop) {
    this.#layout()
    // Read before writing: one layout for both, none forced between the DOM changes below.
    const { clientHeight, scrollTop: current } = this.scroller
    const start = this.count === 0 ? 0 : this.#indexAt(Math.max(0, scrollTop - this.overscan))
    const end = this.count === 0 ? -1 : this.#indexAt(scrollTop + clientHeight + this.overscan)
    const [from, to] = this.range
    for (const [index, el] of this.rows) {
      if (index >= start && index <= end) continue
      this.observer.unobserve(el)
      el.remove()
      this.rows.delete(index)
    }
    const keep = from <= end && to >= start
    for (let i = (keep ? Math.min(from, end + 1) : end + 1) - 1; i >= start; i--) {
      const el = this.#make(i)
      this.body.prepend(el)
      this.rows.set(i, el)
    }
    for (let i = keep ? Math.max(to + 1, start) : start; i <= end; i++) {
      if (this.rows.has(i)) continue
      const el = this.#make(i)
      this.body.append(el)
      this.rows.set(i, el)
    }
    this.range = [start, end]
    this.top.style.height = `${this.offsets[start]}px`
    this.bottom.style.height = `${this.offsets[this.count] - this.offsets[end + 1]}px`
    if (Math.abs(current - scrollTop) >= 1) {
      this.scroller.scrollTop = scrollTop
      this.expectedTop = this.scroller.scrollTop // as clamped by the browser
    }
  }

  #measured (entries) {
    let changed = false
    for (const entry of entries) {
      const index = Number(entry.target.dataset.vindex)
      if (!entry.target.isConnected || index >= this.count) continue
      const height = entry.borderBoxSize?.[0]?.blockSize ?? entry.target.offsetHeight
      const old = this.heights[index]
      if (old === height) continue
      if (old === 0) this.measured.n++
      this.measured.sum += height - old
      this.heights[index] = height
      changed = true
    }
    if (!changed) return
    this.dirty = true
    this.#render(this.#target())
  }
}
