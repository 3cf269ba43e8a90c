/**
 * Append bodies (API.md "Entries"): `{ entries: [NewEntry, …], parentId? }` or one NewEntry
 * (which may carry `parentId` itself). A batch is validated whole before anything is appended,
 * with the per-type fields of `entryFields` and the manager's own rules (SPEC.md §6.4), so that
 * the appends that follow cannot fail half-way.
 */
import { Type, type TProperties } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { UnknownLabelTarget, UnknownParent, Validation } from '../errors.js'
import { RESERVED_ROLES } from '../session/append-rules.js'
import { messageProblem } from '../session/reader-fields.js'
import { isObject } from '../session/guards.js'
import { ENTRY_TYPES, entryFields, isOtherEntryType, type EntryType } from '../session/types.js'
import type { NewEntryFields } from '../session/session-manager.js'

export interface AppendRequest {
  entries: NewEntryFields[]
  /** `undefined`: attach to the current leaf; `null`: a new root; else that entry. */
  parentId?: string | null
}

/** Keys the server assigns (API.md: a NewEntry has no `id`, `parentId`, `timestamp`). */
const ASSIGNED_KEYS = ['id', 'parentId', 'timestamp'] as const

const checks = new Map<string, TypeCheck<ReturnType<typeof Type.Object>>>(ENTRY_TYPES.map((type: EntryType) => [
  type,
  TypeCompiler.Compile(Type.Object({ type: Type.Literal(type), ...(entryFields[type] as TProperties) }, { additionalProperties: true })),
]))

/** Reads either body form; throws `Validation` (400) for anything else. */
export function parseAppendBody (body: unknown): AppendRequest {
  if (!isObject(body)) throw new Validation('body must be an object')
  if (Object.hasOwn(body, 'entries')) {
    if (!Array.isArray(body.entries)) throw new Validation('entries must be an array')
    return withParent({ entries: body.entries as NewEntryFields[] }, body.parentId)
  }
  if (typeof body.type !== 'string') throw new Validation('body must be {entries: [...]} or one entry with a type')
  // Without a parentId the body is the entry as it is (the append copies its fields anyway).
  if (!Object.hasOwn(body, 'parentId')) return { entries: [body as NewEntryFields] }
  const { parentId, ...entry } = body
  return withParent({ entries: [entry as NewEntryFields] }, parentId)
}

function withParent (request: AppendRequest, parentId: unknown): AppendRequest {
  if (parentId === undefined) return request
  if (parentId !== null && (typeof parentId !== 'string' || parentId === '')) {
    throw new Validation('parentId must be a non-empty string or null')
  }
  request.parentId = parentId
  return request
}

/**
 * Checks a whole batch against the session (`exists` tells whether an entry id is known):
 * 400 for a malformed entry, 422 for an unknown `parentId` or label target.
 */
export function validateAppend (request: AppendRequest, exists: (id: string) => boolean): void {
  if (request.entries.length === 0) throw new Validation('entries must hold at least one entry')
  request.entries.forEach((entry, i) => { validateEntry(entry, `entries/${i}`, exists) })
  if (typeof request.parentId === 'string' && !exists(request.parentId)) throw new UnknownParent(request.parentId)
}

function validateEntry (entry: unknown, at: string, exists: (id: string) => boolean): void {
  if (!isObject(entry)) throw new Validation(`${at} must be an object`)
  for (const key of ASSIGNED_KEYS) {
    if (Object.hasOwn(entry, key)) throw new Validation(`${at} must not have '${key}': the server assigns it`)
  }
  // Copied into the new entry, the key would set its prototype and vanish: refused, never dropped.
  if (Object.hasOwn(entry, '__proto__')) throw new Validation(`${at}/__proto__ cannot be stored: no entry has this field (inside a value it is kept as data)`)
  // A type this build does not know is stored as it is (SPEC.md §3.4); only the header's is refused.
  if (isOtherEntryType(entry.type)) return
  const check = typeof entry.type === 'string' ? checks.get(entry.type) : undefined
  if (check === undefined) throw new Validation(`${at}/type must be a non-empty string other than 'session'`)
  if (!check.Check(entry)) {
    const first = check.Errors(entry).First()
    throw new Validation(`${at}${first?.path ?? ''} ${first?.message ?? 'is invalid'}`)
  }
  if (entry.type === 'message') {
    const role = (entry.message as { role: string }).role
    if (RESERVED_ROLES.has(role)) throw new Validation(`${at}/message/role '${role}' is reserved`)
    const problem = messageProblem(entry.message as Record<string, unknown>)
    if (problem !== undefined) throw new Validation(`${at}: ${problem} (the agents cannot open a session file without it)`)
  }
  if (entry.type === 'label' && !exists(entry.targetId as string)) throw new UnknownLabelTarget(entry.targetId as string)
}
