/**
 * One session in memory, without any I/O (SPEC.md §6): the records, the tree and its leaf, the
 * append rules, navigation and every read. `SessionManager` adds persistence to it (§8); the
 * service's registry keeps its sessions as models and stores them through its store.
 */
import { EntryNotFound } from '../errors.js'
import { checkNewEntry } from './append-rules.js'
import { buildSessionContext } from './context.js'
import { setOwnField } from './guards.js'
import { nowIso } from './ids.js'
import { SessionState, type Checkpoint } from './session-state.js'
import { buildTree, flatTree, getChildren, isEntry, type EntryIndex, type FlatTreeNode } from './tree.js'
import type {
  AgentMessage, EntryType, FileRecord, SessionContext, SessionEntryBase, SessionHeader, SessionTreeNode,
} from './types.js'

export type { Checkpoint }

/** A new entry as the generic append takes it: a type plus its fields, no id/parentId/timestamp. */
export type NewEntryFields = { type: EntryType | string } & Record<string, unknown>

export class SessionModel {
  /** @internal the records and their indexes; shared with the manager's own files. */
  state: SessionState

  /** A model of `records` (header first), leaf on the last entry; `records` is taken, not copied. */
  constructor (records: FileRecord[]) {
    this.state = new SessionState(records)
  }

  /** Runs before any change; a persisting manager throws its latched error here (§8.7). */
  protected beforeChange (): void {}

  /** Runs after an entry joined the session; a persisting manager queues its line here (§8.3). */
  protected afterAppend (_entry: SessionEntryBase): void {}

  // ── Appends (§6.4) ──────────────────────────────────────────────────────────

  /**
   * Appends one entry of any type with the checks and defaults of its typed method; extra keys
   * are kept. Throws (before changing anything) when a check fails. Returns the new entry id.
   */
  appendEntry (fields: NewEntryFields): string {
    this.beforeChange()
    const checked = checkNewEntry(fields, (id) => this.state.byId.has(id))
    const entry = { type: checked.type, id: this.state.newEntryId(), parentId: this.state.leafId, timestamp: nowIso() } as SessionEntryBase
    // The other fields follow in their own order (an object spread, without its slow path).
    for (const key of Object.keys(checked)) {
      if (key !== 'type' && key !== 'id' && key !== 'parentId' && key !== 'timestamp') setOwnField(entry, key, checked[key])
    }
    this.state.add(entry)
    this.afterAppend(entry)
    return entry.id
  }

  appendMessage (message: AgentMessage): string {
    return this.appendEntry({ type: 'message', message })
  }

  appendThinkingLevelChange (thinkingLevel?: string | null): string {
    return this.appendEntry({ type: 'thinking_level_change', thinkingLevel })
  }

  appendModelChange (model: string, role?: string): string {
    return this.appendEntry({ type: 'model_change', model, role })
  }

  appendCompaction (summary: string, shortSummary: string | undefined, firstKeptEntryId: string | undefined,
    tokensBefore: number, details?: unknown, fromExtension?: boolean, preserveData?: Record<string, unknown>): string {
    return this.appendEntry({
      type: 'compaction', summary, shortSummary, firstKeptEntryId, tokensBefore, details, preserveData, fromExtension,
    })
  }

  appendCustomEntry (customType: string, data?: unknown): string {
    return this.appendEntry({ type: 'custom', customType, data })
  }

  appendCustomMessageEntry (customType: string, content: string | unknown[], display: boolean, details?: unknown,
    attribution: 'user' | 'agent' = 'agent'): string {
    return this.appendEntry({ type: 'custom_message', customType, content, display, details, attribution })
  }

  appendLabelChange (targetId: string, label?: string): string {
    return this.appendEntry({ type: 'label', targetId, label })
  }

  appendTtsrInjection (ruleNames: string[]): string {
    return this.appendEntry({ type: 'ttsr_injection', injectedRules: ruleNames })
  }

  appendSessionInit (init: { systemPrompt: string, task: string, tools: string[], outputSchema?: unknown }): string {
    return this.appendEntry({ type: 'session_init', ...init })
  }

  appendModeChange (mode: string, data?: Record<string, unknown>): string {
    return this.appendEntry({ type: 'mode_change', mode, data })
  }

  /**
   * Appends an entry that already carries its `id`, `parentId` and `timestamp` (a record an agent
   * wrote), as it is; it becomes the leaf. The caller checks the id is new and the parent known.
   */
  appendRecord (entry: SessionEntryBase): void {
    this.beforeChange()
    this.state.add(entry)
    this.afterAppend(entry)
  }

  // ── Navigation (§6.5) ───────────────────────────────────────────────────────

  branch (entryId: string): void {
    if (!this.state.byId.has(entryId)) throw new EntryNotFound(entryId)
    this.state.leafId = entryId
  }

  resetLeaf (): void {
    this.state.leafId = null
  }

  branchWithSummary (fromId: string | null, summary: string, details?: unknown, fromExtension?: boolean): string {
    this.beforeChange()
    if (fromId !== null && !this.state.byId.has(fromId)) throw new EntryNotFound(fromId)
    const previous = this.state.leafId
    this.state.leafId = fromId
    try {
      return this.appendEntry({ type: 'branch_summary', fromId: fromId ?? 'root', summary, details, fromExtension })
    } catch (err) {
      this.state.leafId = previous
      throw err
    }
  }

  // ── Changes the service makes around appends ───────────────────────────────

  /** A mark to roll back to: everything added after it is taken out again, the leaf restored. */
  checkpoint (): Checkpoint { return this.state.checkpoint() }

  /** Takes out every record added since `mark`, and restores the leaf it had then. */
  rollback (mark: Checkpoint): void { this.state.rollback(mark) }

  /**
   * Adds records stored by someone else after this session's last one (the leaf moves to the
   * last new entry, as a reload of the whole session would put it).
   */
  addStoredRecords (records: readonly FileRecord[]): void {
    for (const record of records) {
      if (isEntry(record)) this.state.add(record as SessionEntryBase)
      else this.state.records.push(record)
    }
  }

  /** Replaces the header record. */
  setHeader (header: SessionHeader): void {
    this.state.records[0] = header
  }

  // ── Reads (§6.6) ────────────────────────────────────────────────────────────

  getLeafId (): string | null { return this.state.leafId }
  getLeafEntry (): SessionEntryBase | undefined {
    return this.state.leafId === null ? undefined : this.state.byId.get(this.state.leafId)
  }

  getEntry (id: string): SessionEntryBase | undefined { return this.state.byId.get(id) }
  /** Every entry in file order (opaque records excluded); a new array. */
  getEntries (): SessionEntryBase[] { return [...this.state.entries] }
  /** Number of entries; `seq` of an entry is its 1-based position among them. */
  entryCount (): number { return this.state.entries.length }
  /** Entries `[start, end)` in file order, without copying the whole list. */
  entriesSlice (start: number, end: number): SessionEntryBase[] { return this.state.entries.slice(start, end) }
  /** Every record, header first, opaque ones included (what the session's text holds). */
  records (): readonly FileRecord[] { return this.state.records }
  getHeader (): SessionHeader { return this.state.header }
  getSessionId (): string { return this.state.header.id }
  /** Some `message` entry has role `assistant` (any branch): SPEC.md §8.3's deferral is over. */
  hasAssistant (): boolean { return this.state.hasAssistant }

  getBranch (fromId?: string): SessionEntryBase[] {
    const id = fromId ?? this.state.leafId
    const leaf = id === null ? undefined : this.state.byId.get(id)
    return leaf === undefined ? [] : this.state.pathTo(leaf)
  }

  getChildren (parentId: string): SessionEntryBase[] { return getChildren(this.state.entries, parentId) }
  getLabel (id: string): string | undefined { return this.state.labels.get(id) }
  /** Target id → current label, in the order targets became labelled. */
  labels (): ReadonlyMap<string, string> { return this.state.labels }
  /** The id index (later duplicates win, §5.4). */
  index (): EntryIndex { return this.state.byId }
  getTree (): SessionTreeNode[] {
    return buildTree(this.state.entries, this.state.byId, this.state.labels, this.state.parentPositions())
  }

  /** The tree as flat nodes in file order, children as ids (what `GET /tree` serves). */
  getFlatTree (): FlatTreeNode[] {
    return flatTree(this.state.entries, this.state.byId, this.state.labels, this.state.parentPositions())
  }

  /** The context of the current leaf, or of `leafId` when given (unknown ids fall back, §7.2). */
  buildSessionContext (leafId?: string | null): SessionContext {
    const leaf = leafId === undefined ? this.state.leafId : leafId
    return buildSessionContext(this.state.entries, leaf, this.state.byId, (entry) => this.state.pathTo(entry))
  }
}
