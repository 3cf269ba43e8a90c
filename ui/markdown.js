// A small Markdown renderer that builds DOM nodes and never parses HTML: every piece of text
// becomes a text node, so whatever a message contains (<script>, onerror=…) is shown as text.
// It covers what agents write: paragraphs, headings, fenced and indented code, lists, quotes,
// rules, inline code, bold, italic and links (http, https and mailto only).
import { h } from './dom.js'

const FENCE = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)/
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/
const BULLET = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/
const QUOTE = /^\s{0,3}>\s?(.*)$/
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/

/** Renders `text` into a fragment of block elements. */
export function renderMarkdown (text) {
  const out = document.createDocumentFragment()
  const lines = String(text).split(/\r\n|\r|\n/)
  let i = 0
  while (i < lines.length) {
    const line = lines[i]
    if (line.trim() === '') { i++; continue }
    let m
    if ((m = FENCE.exec(line)) !== null) {
      const close = new RegExp(`^\\s{0,3}${m[1][0] === '`' ? '`' : '~'}{${m[1].length},}\\s*$`)
      const body = []
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i])
      i++
      out.append(h('pre', {}, h('code', { dataset: m[2] === '' ? {} : { lang: m[2] } }, body.join('\n'))))
    } else if ((m = HEADING.exec(line)) !== null) {
      out.append(h(`h${Math.min(6, m[1].length + 2)}`, {}, inline(m[2])))
      i++
    } else if (RULE.test(line)) {
      out.append(h('hr'))
      i++
    } else if (QUOTE.test(line)) {
      const body = []
      for (; i < lines.length && (m = QUOTE.exec(lines[i])) !== null; i++) body.push(m[1])
      out.append(h('blockquote', {}, renderMarkdown(body.join('\n'))))
    } else if (BULLET.test(line)) {
      i = list(lines, i, out)
    } else if (/^( {4}|\t)/.test(line)) {
      const body = []
      for (; i < lines.length && (/^( {4}|\t)/.test(lines[i]) || lines[i].trim() === ''); i++) body.push(lines[i].replace(/^( {4}|\t)/, ''))
      out.append(h('pre', {}, h('code', {}, body.join('\n').replace(/\n+$/, ''))))
    } else {
      const body = []
      for (; i < lines.length && lines[i].trim() !== '' && !startsBlock(lines[i]); i++) body.push(lines[i])
      out.append(h('p', {}, body.flatMap((l, n) => n === 0 ? [inline(l)] : [h('br'), inline(l)])))
    }
  }
  return out
}

const startsBlock = (line) => FENCE.test(line) || HEADING.test(line) || QUOTE.test(line) || BULLET.test(line) || RULE.test(line)

/** A list from line `i`; an item goes on over indented lines. Returns the next line index. */
function list (lines, i, out) {
  const ordered = /^\s*\d/.test(lines[i])
  const first = Number.parseInt(lines[i], 10)
  const items = []
  for (; i < lines.length; i++) {
    const m = BULLET.exec(lines[i])
    if (m !== null && /^\s*\d/.test(lines[i]) === ordered) items.push([m[2]])
    else if (items.length > 0 && lines[i].trim() !== '' && /^\s/.test(lines[i])) items.at(-1).push(lines[i].replace(/^\s{1,4}/, ''))
    else break
  }
  const el = h(ordered ? 'ol' : 'ul', ordered && first > 1 ? { start: first } : {})
  for (const item of items) {
    const body = renderMarkdown(item.join('\n'))
    // A one-paragraph item shows its text without the paragraph's margins.
    const only = body.childNodes.length === 1 && body.firstChild.tagName === 'P' ? [...body.firstChild.childNodes] : [body]
    el.append(h('li', {}, only))
  }
  out.append(el)
  return i
}

// One pass over the line: the earliest match wins; text between matches is text.
const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__|\*(?=[^\s*])([\s\S]*?[^\s*])\*|(?<![\w])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\w])|\[([^\]]+)\]\(\s*([^)\s]+)\s*\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g
const SAFE_URL = /^(https?:|mailto:)/i

/** Inline markup of one line as nodes. */
export function inline (text) {
  const out = document.createDocumentFragment()
  let last = 0
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.append(text.slice(last, m.index))
    last = m.index + m[0].length
    if (m[1] !== undefined) out.append(h('code', {}, m[2].replace(/^ (.*) $/, '$1')))
    else if (m[3] !== undefined || m[4] !== undefined) out.append(h('strong', {}, inline(m[3] ?? m[4])))
    else if (m[5] !== undefined || m[6] !== undefined) out.append(h('em', {}, inline(m[5] ?? m[6])))
    else if (m[7] !== undefined) out.append(link(m[8], inline(m[7])))
    else out.append(link(m[9], m[9]))
  }
  if (last < text.length) out.append(text.slice(last))
  return out
}

function link (url, content) {
  if (!SAFE_URL.test(url)) return h('span', {}, content)
  return h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, content)
}
