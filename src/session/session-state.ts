/**
 * The in-memory session: every record in file order (header first, opaque records kept in
 * place), the entries among them, the id index, the label map and the leaf (SPEC.md §5.4, §6.1).
 */
import { createEntryId } from './ids.js'
import { isEntry, normalizeParentId, pathFrom } from './tree.js'
import type { FileRecord, SessionEntryBase, SessionHeader } from './types.js'

/** How many of the latest entries a new entry's parent is looked for among before the id → position map. */
const NEAR = 64

/** What `SessionState.rollback` restores: the counts and the leaf at the mark. */
export interface Checkpoint {
  readonly records: number
  readonly entries: number
  readonly leafId: string | null
  readonly hasAssistant: boolean
}

export class SessionState {
  /** Header first, then every later record in file order, opaque ones included. */
  records: FileRecord[]
  entries: SessionEntryBase[] = []
  byId = new Map<string, SessionEntryBase>()
  /** Target id → label; insertion order is the order targets went from unlabelled to labelled. */
  labels = new Map<string, string>()
  leafId: string | null = null
  /** Some `message` entry has role `assistant` (any branch): the deferral rule is over (§8.3). */
  hasAssistant = false
  /**
   * The position in `entries` of each entry's parent (-1: a root), while the session is regular:
   * every id unique and every parent before its child, as appends build a session. Walks then
   * follow array positions instead of hashing ids: a long path stays linear in its length
   * without a hash lookup per step. `undefined` once an entry breaks that shape (a file of
   * another writer); the walks then go through `byId`.
   */
  #parents: number[] | undefined = []
  /** Id → position in `entries` of the first `#positioned` entries, extended when a lookup needs it. */
  #positions = new Map<string, number>()
  #positioned = 0

  constructor (records: FileRecord[]) {
    this.records = records
    this.#reindex()
  }

  get header (): SessionHeader { return this.records[0] as SessionHeader }

  /** Replaces every record and rebuilds index, labels and the leaf (the last entry in file order). */
  replace (records: FileRecord[]): void {
    this.records = records
    this.#reindex()
  }

  /** Adds an entry built by the manager and makes it the leaf. */
  add (entry: SessionEntryBase): void {
    this.records.push(entry)
    this.#track(entry)
    this.leafId = entry.id
  }

  /** A mark of the state now, for `rollback`. */
  checkpoint (): Checkpoint {
    return { records: this.records.length, entries: this.entries.length, leafId: this.leafId, hasAssistant: this.hasAssistant }
  }

  /**
   * Takes out every record added after `mark` (appends only: the records before it are as they
   * were) and restores the leaf. The id index, labels and parent positions follow.
   */
  rollback (mark: Checkpoint): void {
    const removed = this.entries.splice(mark.entries)
    this.records.length = mark.records
    this.leafId = mark.leafId
    this.hasAssistant = mark.hasAssistant
    if (removed.length === 0) return
    let labelled = false
    for (const entry of removed) {
      if (this.byId.get(entry.id) === entry) this.byId.delete(entry.id)
      this.#positions.delete(entry.id)
      if (entry.type === 'label') labelled = true
    }
    // A removed entry may have hidden an earlier one of the same id (§5.4: the later one wins).
    const hidden = new Set(removed.filter((e) => !this.byId.has(e.id)).map((e) => e.id))
    if (hidden.size > 0) for (const entry of this.entries) if (hidden.has(entry.id)) this.byId.set(entry.id, entry)
    if (this.#parents !== undefined) this.#parents.length = mark.entries
    this.#positioned = Math.min(this.#positioned, mark.entries)
    if (labelled) {
      this.labels = new Map()
      for (const entry of this.entries) if (entry.type === 'label') applyLabelEntry(this.labels, entry)
    }
  }

  /** A fresh entry id, unique among every entry of the session (§3.2). */
  newEntryId (): string {
    return createEntryId((id) => this.byId.has(id))
  }

  /** Parent positions (see `#parents`), or `undefined` when the session is not regular. */
  parentPositions (): readonly number[] | undefined { return this.#parents }

  /** The path root → `leaf` (§6.1, `pathFrom`): by parent positions when the session is regular. */
  pathTo (leaf: SessionEntryBase): SessionEntryBase[] {
    const parents = this.#parents
    const at = parents === undefined ? -1 : this.#positionOf(leaf)
    if (parents === undefined || at < 0) return pathFrom(this.byId, leaf)
    let length = 0
    for (let i = at; i >= 0; i = parents[i]!) length++
    const path = new Array<SessionEntryBase>(length) // filled leaf first, at its final size
    for (let i = at; i >= 0; i = parents[i]!) path[--length] = this.entries[i]!
    return path
  }

  /** Position of `entry` in `entries` (regular sessions only), -1 when it is not there. */
  #positionOf (entry: SessionEntryBase): number {
    const last = this.entries.length - 1
    if (this.entries[last] === entry) return last
    const at = this.#indexPositions().get(entry.id)
    return at !== undefined && this.entries[at] === entry ? at : -1
  }

  /** The id → position map, brought up to date with `entries`. */
  #indexPositions (): Map<string, number> {
    for (; this.#positioned < this.entries.length; this.#positioned++) {
      this.#positions.set(this.entries[this.#positioned]!.id, this.#positioned)
    }
    return this.#positions
  }

  /** Position of `id` among the `NEAR` entries before `at` (where agents branch from), or -1. */
  #near (id: string, at: number): number {
    for (let i = at - 1; i >= 0 && i >= at - NEAR; i--) if (this.entries[i]!.id === id) return i
    return -1
  }

  #reindex (): void {
    this.entries = []
    this.byId = new Map()
    this.labels = new Map()
    this.hasAssistant = false
    this.#parents = []
    this.#positions = new Map()
    this.#positioned = 0
    for (let i = 1; i < this.records.length; i++) {
      const record = this.records[i] as FileRecord
      if (isEntry(record)) this.#track(record as SessionEntryBase)
    }
    const last = this.entries[this.entries.length - 1]
    this.leafId = last === undefined ? null : last.id
  }

  #track (entry: SessionEntryBase): void {
    const size = this.byId.size
    this.byId.set(entry.id, entry)
    if (this.#parents !== undefined) this.#trackParent(entry, this.byId.size === size)
    this.entries.push(entry)
    if (entry.type === 'label') applyLabelEntry(this.labels, entry)
    if (entry.type === 'message' && (entry.message as { role?: unknown } | undefined)?.role === 'assistant') {
      this.hasAssistant = true
    }
  }

  /**
   * Records the parent position of `entry` (indexed, not yet in `entries`), or ends the regular
   * shape: a `duplicate` id (the later entry wins, §5.4) or a parent that is not there yet.
   */
  #trackParent (entry: SessionEntryBase, duplicate: boolean): void {
    const parents = this.#parents!
    const at = this.entries.length
    const parentId = normalizeParentId(entry)
    let parent = -1
    if (duplicate) parent = -2
    else if (parentId !== null) {
      parent = this.#near(parentId, at)
      if (parent < 0) parent = this.#indexPositions().get(parentId) ?? -2
    }
    if (parent === -2) {
      this.#parents = undefined
      this.#positions = new Map()
      this.#positioned = 0
      return
    }
    parents.push(parent)
  }
}

/**
 * Replays one `label` entry onto a label map (§3.5): a non-empty label sets the target's label,
 * absent or empty clears it. A target that goes from unlabelled to labelled moves to the end.
 */
export function applyLabelEntry (labels: Map<string, string>, entry: SessionEntryBase): void {
  const target = entry.targetId
  if (typeof target !== 'string') return
  const label = entry.label
  if (typeof label === 'string' && label !== '') labels.set(target, label)
  else labels.delete(target)
}
