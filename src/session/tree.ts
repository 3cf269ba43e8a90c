/**
 * Entry recognition, the id index, parent walks, labels and the tree (SPEC.md §5.4, §6.1,
 * §6.6). Every walk is iterative, so a 100,000-entry chain costs linear time and no stack.
 */
import { isNonEmptyString } from './guards.js'
import type { FileRecord, SessionEntryBase, SessionTreeNode } from './types.js'

/** Id → entry; for duplicate ids the later entry in file order wins (§5.4). */
export type EntryIndex = Map<string, SessionEntryBase>

/** One node of the flat tree served over HTTP: children are ids (API.md "tree"). */
export interface FlatTreeNode {
  id: string
  parentId: string | null
  type: string
  timestamp: string
  label?: string
  /** Child ids, ordered as in `buildTree`. */
  children: string[]
}

/**
 * True for an entry: a record with a string `type` other than `"session"` and a non-empty
 * string `id`. Anything else after the header is an opaque record.
 * @see SPEC.md §1.2, §5.4
 */
export function isEntry (record: FileRecord): record is SessionEntryBase {
  return typeof record.type === 'string' && record.type !== 'session' && isNonEmptyString(record.id)
}

/** The entry's parent id, or `null` when `parentId` is not a non-empty string (§5.4). */
export function normalizeParentId (entry: FileRecord): string | null {
  return isNonEmptyString(entry.parentId) ? entry.parentId : null
}

/** Builds the id index of `entries`; a later duplicate id replaces the earlier one. @see SPEC.md §5.4 */
export function buildIndex (entries: readonly SessionEntryBase[]): EntryIndex {
  const byId: EntryIndex = new Map()
  for (const entry of entries) byId.set(entry.id, entry)
  return byId
}

/**
 * The path root → `start`: follows `parentId` through `byId` and stops at a `null` or missing
 * parent or at the first id already visited (cycle guard; the repeated entry is not added
 * twice).
 * @see SPEC.md §6.1
 */
export function pathFrom (byId: EntryIndex, start: SessionEntryBase): SessionEntryBase[] {
  const path: SessionEntryBase[] = []
  const seen = new Set<string>()
  let current: SessionEntryBase | undefined = start
  while (current !== undefined && !seen.has(current.id)) {
    seen.add(current.id)
    path.push(current)
    const parentId = normalizeParentId(current)
    current = parentId === null ? undefined : byId.get(parentId)
  }
  return path.reverse()
}

/** `pathFrom` for an id; `[]` when `leafId` is not in `byId`. @see SPEC.md §6.1, §6.6 getBranch */
export function walkToRoot (byId: EntryIndex, leafId: string): SessionEntryBase[] {
  const leaf = byId.get(leafId)
  return leaf === undefined ? [] : pathFrom(byId, leaf)
}

/**
 * The label map: replays `label` entries in file order; a non-empty string `label` sets the
 * target's label, anything else clears it. Insertion order of the map is the order in which
 * each target last went from unlabelled to labelled (relabelling keeps the position), which is
 * the order `createBranchedSession` recreates labels in.
 * @see SPEC.md §3.5 label, §6.3, §6.6
 */
export function buildLabelMap (entries: readonly SessionEntryBase[]): Map<string, string> {
  const labels = new Map<string, string>()
  for (const entry of entries) {
    if (entry.type !== 'label' || !isNonEmptyString(entry.targetId)) continue
    if (isNonEmptyString(entry.label)) labels.set(entry.targetId, entry.label)
    else labels.delete(entry.targetId)
  }
  return labels
}

/**
 * Entries whose (normalized) `parentId` equals `parentId`, in file order.
 * @see SPEC.md §6.6
 */
export function getChildren (entries: readonly SessionEntryBase[], parentId: string | null): SessionEntryBase[] {
  return entries.filter((entry) => normalizeParentId(entry) === parentId)
}

interface TreeShape {
  /** Indexed entries (the winner of each id), file order. Positions below index this array. */
  indexed: readonly SessionEntryBase[]
  /** Positions of the roots, file order. */
  roots: number[]
  /**
   * Children of position `i`: `childList[childStart[i]]` up to `childList[childStart[i + 1]]`,
   * sorted by timestamp (stable). Two flat arrays instead of one array per entry.
   */
  childStart: Int32Array
  childList: Int32Array
}

/**
 * An array of `length` slots to be filled, allocated at its final size: a tree has one child list
 * per entry, and lists grown by `push` reserve room for many more children than a chain has.
 */
function sized<T> (length: number): T[] {
  return length === 0 ? [] : new Array<T>(length)
}

/** Sort key of a child: `Date.parse(timestamp)`, 0 when unparseable. */
function timeKey (entry: SessionEntryBase): number {
  const t = typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) : NaN
  return Number.isNaN(t) ? 0 : t
}

/** The indexed entries and the position of each one's parent (-1: a root), through `byId`. */
function parentsOf (entries: readonly SessionEntryBase[], byId: EntryIndex): { indexed: SessionEntryBase[], parents: Int32Array } {
  const indexed: SessionEntryBase[] = []
  const position = new Map<string, number>()
  for (const entry of entries) {
    if (byId.get(entry.id) !== entry) continue
    position.set(entry.id, indexed.length)
    indexed.push(entry)
  }
  const parents = new Int32Array(indexed.length)
  for (let i = 0; i < indexed.length; i++) {
    const entry = indexed[i]!
    const parentId = normalizeParentId(entry)
    parents[i] = parentId === null || parentId === entry.id ? -1 : position.get(parentId) ?? -1
  }
  return { indexed, parents }
}

/**
 * Roots and sorted child lists of the indexed entries: linear passes plus the sorts of the
 * lists with more than one child, no recursion. `parents` (parent positions in `entries`, as
 * `SessionState.parentPositions` keeps them) spares the id lookups when every id in `entries`
 * is unique; without it they are found through `byId`.
 */
function treeShape (entries: readonly SessionEntryBase[], byId: EntryIndex, known?: ArrayLike<number>): TreeShape {
  const { indexed, parents } = known !== undefined && known.length === entries.length
    ? { indexed: entries, parents: known }
    : parentsOf(entries, byId)
  const n = indexed.length
  const roots: number[] = []
  const childStart = new Int32Array(n + 1)
  for (let i = 0; i < n; i++) {
    const parent = parents[i]!
    if (parent < 0) roots.push(i)
    else childStart[parent + 1]!++
  }
  for (let i = 0; i < n; i++) childStart[i + 1]! += childStart[i]!
  const childList = new Int32Array(childStart[n]!)
  const filled = childStart.slice(0, n)
  for (let i = 0; i < n; i++) {
    const parent = parents[i]!
    if (parent >= 0) childList[filled[parent]!++] = i
  }
  for (let i = 0; i < n; i++) {
    const from = childStart[i]!
    const to = childStart[i + 1]!
    if (to - from > 1) sortByTime(childList, from, to, indexed)
  }
  return { indexed, roots, childStart, childList }
}

/** Sorts `list[from, to)` (positions in file order) by `timeKey`, stably. */
function sortByTime (list: Int32Array, from: number, to: number, indexed: readonly SessionEntryBase[]): void {
  const keyed = Array.from(list.subarray(from, to), (i) => ({ i, key: timeKey(indexed[i]!) }))
  keyed.sort((a, b) => a.key - b.key) // stable
  for (let k = 0; k < keyed.length; k++) list[from + k] = keyed[k]!.i
}

/**
 * The tree: one node per indexed entry. Roots (parent `null`, the entry itself, or unknown)
 * in file order; children sorted by timestamp ascending, stable, unparseable as 0. Entries on a
 * cycle without any root are reachable only through `flatTree`. `byId` must be
 * `buildIndex(entries)` (or the manager's equivalent index); `parents`, when given, the parent
 * positions of `SessionState.parentPositions` for these entries.
 * @see SPEC.md §6.6
 */
export function buildTree (
  entries: readonly SessionEntryBase[],
  byId: EntryIndex,
  labels: ReadonlyMap<string, string>,
  parents?: ArrayLike<number>
): SessionTreeNode[] {
  const { indexed, roots, childStart, childList } = treeShape(entries, byId, parents)
  const labelled = labels.size > 0
  const nodes = indexed.map((entry, i): SessionTreeNode => {
    const label = labelled ? labels.get(entry.id) : undefined
    const children = sized<SessionTreeNode>(childStart[i + 1]! - childStart[i]!)
    return label === undefined ? { entry, children } : { entry, children, label }
  })
  for (let i = 0; i < nodes.length; i++) {
    const { children } = nodes[i]!
    const from = childStart[i]!
    for (let k = 0; k < children.length; k++) children[k] = nodes[childList[from + k]!]!
  }
  return roots.map((i) => nodes[i]!)
}

/**
 * The tree as a flat list, one node per indexed entry in file order, children as ids in the
 * same order as `buildTree`. Safe to serialize at any depth.
 * @see SPEC.md §6.6, API.md "Tree nodes are flat"
 */
export function flatTree (
  entries: readonly SessionEntryBase[],
  byId: EntryIndex,
  labels: ReadonlyMap<string, string>,
  parents?: ArrayLike<number>
): FlatTreeNode[] {
  const { indexed, childStart, childList } = treeShape(entries, byId, parents)
  const labelled = labels.size > 0
  return indexed.map((entry, i) => {
    const children = sized<string>(childStart[i + 1]! - childStart[i]!)
    const from = childStart[i]!
    for (let k = 0; k < children.length; k++) children[k] = indexed[childList[from + k]!]!.id
    const node: FlatTreeNode = { id: entry.id, parentId: normalizeParentId(entry), type: entry.type, timestamp: entry.timestamp, children }
    const label = labelled ? labels.get(entry.id) : undefined
    if (label !== undefined) node.label = label
    return node
  })
}
