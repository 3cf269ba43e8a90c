// One session as the page holds it: every entry by id, the tree (SPEC.md getTree rules: roots
// are entries without a known parent; children sorted by timestamp, ties in file order),
// labels, the paths from a leaf to its root, and token and cost totals.
import { plain } from './dom.js'

export class SessionData {
  constructor () {
    this.entries = []
    this.byId = new Map()
    this.labels = new Map()
    this.leafId = null
    this.totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, messages: 0 }
    this.treeDirty = true
    this.childrenOf = new Map()
    this.roots = []
  }

  /** Adds entries in seq order. */
  add (entries) {
    for (const e of entries) {
      this.entries.push(e)
      this.byId.set(e.id, e)
      if (e.type === 'label') {
        if (typeof e.label === 'string' && e.label !== '') this.labels.set(e.targetId, e.label)
        else this.labels.delete(e.targetId)
      }
      if (e.type === 'message') this.#count(e.message ?? {})
    }
    this.treeDirty = true
  }

  #count (message) {
    this.totals.messages++
    const u = message.usage
    if (message.role !== 'assistant' || u === undefined || u === null) return
    this.totals.input += u.input ?? 0
    this.totals.output += u.output ?? 0
    this.totals.cacheRead += u.cacheRead ?? 0
    this.totals.cacheWrite += u.cacheWrite ?? 0
    this.totals.cost += u.cost?.total ?? 0
  }

  #tree () {
    if (!this.treeDirty) return
    const childrenOf = new Map()
    const roots = []
    for (const e of this.entries) {
      const parent = e.parentId
      if (parent === null || parent === undefined || parent === e.id || !this.byId.has(parent)) roots.push(e.id)
      else {
        const list = childrenOf.get(parent)
        if (list === undefined) childrenOf.set(parent, [e.id])
        else list.push(e.id)
      }
    }
    const time = (id) => Date.parse(this.byId.get(id).timestamp) || 0
    for (const list of childrenOf.values()) if (list.length > 1) list.sort((a, b) => time(a) - time(b))
    this.childrenOf = childrenOf
    this.roots = roots
    this.treeDirty = false
  }

  children (id) {
    this.#tree()
    return this.childrenOf.get(id) ?? []
  }

  /** Entries from the root to `leafId` (cycle-safe); [] for null or an unknown id. */
  path (leafId) {
    const path = []
    const seen = new Set()
    for (let e = this.byId.get(leafId); e !== undefined && !seen.has(e.id); e = this.byId.get(e.parentId)) {
      seen.add(e.id)
      path.push(e)
    }
    return path.reverse()
  }

  /**
   * The tree as rows for display, depth-first: a chain stays at one depth and the children of
   * an entry with several children are indented one step (deep sessions do not drift right).
   */
  treeRows () {
    this.#tree()
    const rows = []
    const stack = []
    for (let i = this.roots.length - 1; i >= 0; i--) stack.push([this.roots[i], 0, this.roots.length > 1])
    while (stack.length > 0) {
      const [id, depth, forked] = stack.pop()
      const kids = this.childrenOf.get(id) ?? []
      rows.push({ id, depth, forked, fork: kids.length > 1 })
      const next = kids.length > 1 ? depth + 1 : depth
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], next, kids.length > 1])
    }
    return rows
  }
}

/** A short text of an entry for the tree and titles. */
export function preview (e) {
  if (e === undefined) return ''
  if (e.type === 'message') {
    const m = e.message ?? {}
    const c = m.content
    let text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((b) => b?.text ?? (b?.type === 'toolCall' ? `${b.name}()` : '')).join(' ') : ''
    if (m.role === 'bashExecution') text = m.command ?? ''
    return `${m.role}: ${plain(text)}`
  }
  if (e.type === 'model_change') return `model → ${e.model ?? ''}`
  if (e.type === 'thinking_level_change') return `thinking → ${e.thinkingLevel ?? 'off'}`
  if (e.type === 'compaction' || e.type === 'branch_summary') return `${e.type.replace('_', ' ')}: ${plain(e.summary ?? '')}`
  if (e.type === 'label') return `label: ${e.label ?? ''}`
  return e.type
}
