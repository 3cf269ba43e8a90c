/**
 * The in-memory session: every record in file order (header first, opaque records kept in
 * place), the entries among them, the id index, the label map and the leaf (SPEC.md §5.4, §6.1).
 */
import { createEntryId } from './ids.js'
import { isEntry } from './tree.js'
import type { FileRecord, SessionEntryBase, SessionHeader } from './types.js'

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

  /** A fresh entry id, unique among every entry of the session (§3.2). */
  newEntryId (): string {
    return createEntryId((id) => this.byId.has(id))
  }

  #reindex (): void {
    this.entries = []
    this.byId = new Map()
    this.labels = new Map()
    this.hasAssistant = false
    for (let i = 1; i < this.records.length; i++) {
      const record = this.records[i] as FileRecord
      if (isEntry(record)) this.#track(record as SessionEntryBase)
    }
    const last = this.entries[this.entries.length - 1]
    this.leafId = last === undefined ? null : last.id
  }

  #track (entry: SessionEntryBase): void {
    this.entries.push(entry)
    this.byId.set(entry.id, entry)
    if (entry.type === 'label') applyLabelEntry(this.labels, entry)
    if (entry.type === 'message' && (entry.message as { role?: unknown } | undefined)?.role === 'assistant') {
      this.hasAssistant = true
    }
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
