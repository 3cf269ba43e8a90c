/** Builders for in-memory entries used by the session-model tests. */
import type { SessionEntryBase } from '../../src/session/types.js'

let clock = Date.UTC(2026, 2, 14, 15, 0, 0)

/** A fresh ISO timestamp, one second after the previous one. */
export function tick (): string {
  clock += 1000
  return new Date(clock).toISOString()
}

export function entry (type: string, id: string, parentId: string | null, fields: Record<string, unknown> = {}): SessionEntryBase {
  return { type, id, parentId, timestamp: tick(), ...fields }
}

export function user (id: string, parentId: string | null, text = `user ${id}`): SessionEntryBase {
  return entry('message', id, parentId, { message: { role: 'user', content: text, timestamp: 1 } })
}

export function assistant (
  id: string, parentId: string | null, provider = 'anthropic', model = 'claude-test'
): SessionEntryBase {
  return entry('message', id, parentId, {
    message: { role: 'assistant', provider, model, content: [{ type: 'text', text: `assistant ${id}` }], stopReason: 'stop' },
  })
}

export function compaction (
  id: string, parentId: string | null, firstKeptEntryId: string | undefined, extra: Record<string, unknown> = {}
): SessionEntryBase {
  const fields: Record<string, unknown> = { summary: `summary ${id}`, tokensBefore: 1000, ...extra }
  if (firstKeptEntryId !== undefined) fields.firstKeptEntryId = firstKeptEntryId
  return entry('compaction', id, parentId, fields)
}

/** Links a list of builders into a chain: each entry's parent is the previous one. */
export function chain (...entries: SessionEntryBase[]): SessionEntryBase[] {
  for (let i = 0; i < entries.length; i++) entries[i]!.parentId = i === 0 ? null : entries[i - 1]!.id
  return entries
}
