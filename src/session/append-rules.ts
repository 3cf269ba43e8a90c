/**
 * What every `append*` method checks and fills in before an entry exists (SPEC.md §6.4).
 * One function serves the typed methods and the generic `appendEntry` used by HTTP batches.
 */
import { EntryNotFound, InvalidArgument } from '../errors.js'
import { messageProblem, modelUsageProblem, withReaderUsage } from './reader-fields.js'
import type { FileRecord } from './types.js'

/** Roles only the model itself produces (§6.4 `appendMessage`). */
export const RESERVED_ROLES: ReadonlySet<string> = new Set(['compactionSummary', 'branchSummary'])

/**
 * Validates the type-specific fields of a new entry and applies the defaults of §6.4. Returns a
 * new object (keys whose value is `undefined` removed); throws before anything changes.
 */
export function checkNewEntry (fields: FileRecord, exists: (id: string) => boolean): FileRecord {
  const entry: FileRecord = {}
  for (const key of Object.keys(fields)) {
    const value = fields[key]
    if (value !== undefined) entry[key] = value
  }
  switch (entry.type) {
    case 'message': checkMessage(entry.message); break
    case 'thinking_level_change': entry.thinkingLevel ??= null; break
    case 'model_change':
      if (typeof entry.model !== 'string' || entry.model === '') throw new InvalidArgument('model must be a non-empty string')
      break
    case 'custom_message': entry.attribution ??= 'agent'; break
    case 'label':
      if (typeof entry.targetId !== 'string' || !exists(entry.targetId)) throw new EntryNotFound(String(entry.targetId))
      break
    case 'branch_summary':
      if (typeof entry.fromId !== 'string') throw new InvalidArgument('fromId must be a string')
      break
    default: {
      const problem = modelUsageProblem(entry)
      if (problem !== undefined) throw new InvalidArgument(problem)
    }
  }
  return withReaderUsage(entry)
}

function checkMessage (message: unknown): void {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw new InvalidArgument('message must be an object with a string role')
  }
  const role = (message as { role?: unknown }).role
  if (typeof role !== 'string') throw new InvalidArgument('message must be an object with a string role')
  if (RESERVED_ROLES.has(role)) throw new InvalidArgument(`message role ${role} is reserved`)
  const problem = messageProblem(message as Record<string, unknown>)
  if (problem !== undefined) throw new InvalidArgument(problem)
}
