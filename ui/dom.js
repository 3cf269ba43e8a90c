// Small DOM helpers. Text always goes in as text nodes: nothing here parses HTML.

/**
 * Creates an element. `props` keys: `class`, `text`, `on<Event>` (listeners), `dataset`,
 * boolean/string attributes; `children` may nest arrays and skip null/false.
 */
export function h (tag, props = {}, ...children) {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'class') el.className = value
    else if (key === 'text') el.textContent = String(value)
    else if (key === 'dataset') Object.assign(el.dataset, value)
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value)
    else if (value === true) el.setAttribute(key, '')
    else el.setAttribute(key, String(value))
  }
  append(el, children)
  return el
}

function append (el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    if (Array.isArray(child)) append(el, child)
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
}

/** Removes every child of `el`, then appends `children`. */
export function replace (el, ...children) {
  el.replaceChildren()
  append(el, children)
  return el
}

const numberFormat = new Intl.NumberFormat('en')
/** `12,345`. */
export const int = (n) => numberFormat.format(Math.round(n))

/** A short relative time: `just now`, `5 min ago`, `3 h ago`, else the date. */
export function ago (iso) {
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return ''
  const s = Math.round((Date.now() - t) / 1000)
  if (s < 45) return 'just now'
  if (s < 3600) return `${Math.round(s / 60)} min ago`
  if (s < 86400) return `${Math.round(s / 3600)} h ago`
  return new Date(t).toLocaleDateString()
}

const timeFormat = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' })
/** `HH:MM:SS` of an ISO timestamp or epoch ms. */
export function clock (value) {
  const t = typeof value === 'number' ? value : Date.parse(value)
  return Number.isNaN(t) ? '' : timeFormat.format(t)
}

/** Calls `fn` at most once per animation frame. */
export function perFrame (fn) {
  let queued = false
  return () => {
    if (queued) return
    queued = true
    requestAnimationFrame(() => { queued = false; fn() })
  }
}

/** One line of plain text from Markdown: marks dropped, whitespace collapsed (titles, previews). */
export const plain = (text) => String(text).replace(/[*_`#>~]+/g, '').replace(/\s+/g, ' ').trim()
