/**
 * Entry and header types of the session file (SPEC.md §3), as TypeBox schemas so that the HTTP
 * layer validates with the same definitions the model uses. Every object schema allows extra
 * keys: unknown fields of known types are preserved verbatim (§3.4).
 */
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox'

export const CURRENT_SESSION_VERSION = 3
export const MAX_PERSIST_CHARS = 500_000
export const TRUNCATION_NOTICE = '\n\n[Session persistence truncated large content]'
export const BLOB_EXTERNALIZE_THRESHOLD = 1024
export const BLOB_REF_PREFIX = 'blob:sha256:'
export const PREFIX_READ_BYTES = 4096
export const ENTRY_ID_ATTEMPTS = 100

/** Any parsed JSON object of a session file: the header, an entry or an opaque record (§5.4). */
export type FileRecord = Record<string, unknown>

const open = <P extends TProperties>(properties: P, id: string): TObject<P> =>
  Type.Object(properties, { $id: id, additionalProperties: true })

export const SessionHeaderSchema = open({
  type: Type.Literal('session'),
  version: Type.Optional(Type.Integer({ minimum: 1 })),
  id: Type.String(),
  timestamp: Type.String(),
  cwd: Type.String(),
  title: Type.Optional(Type.String()),
  parentSession: Type.Optional(Type.String()),
}, 'SessionHeader')
export type SessionHeader = Static<typeof SessionHeaderSchema>

/** Agent message carried by a `message` entry: a string `role`, everything else opaque. */
export const AgentMessageSchema = open({
  role: Type.String({ minLength: 1 }),
  content: Type.Optional(Type.Unknown()),
  timestamp: Type.Optional(Type.Number()),
}, 'AgentMessage')
export type AgentMessage = Static<typeof AgentMessageSchema> & Record<string, unknown>

/**
 * The per-type fields of each entry kind (without the base fields), keyed by `type`.
 * The HTTP layer builds its NewEntry schema from these.
 */
export const entryFields = {
  message: { message: AgentMessageSchema },
  thinking_level_change: { thinkingLevel: Type.Optional(Type.Union([Type.String(), Type.Null()])) },
  model_change: { model: Type.String({ minLength: 1 }), role: Type.Optional(Type.String()) },
  compaction: {
    summary: Type.String(),
    shortSummary: Type.Optional(Type.String()),
    firstKeptEntryId: Type.Optional(Type.String()),
    tokensBefore: Type.Number(),
    details: Type.Optional(Type.Unknown()),
    preserveData: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    fromExtension: Type.Optional(Type.Boolean()),
  },
  branch_summary: {
    fromId: Type.String(),
    summary: Type.String(),
    details: Type.Optional(Type.Unknown()),
    fromExtension: Type.Optional(Type.Boolean()),
  },
  custom: { customType: Type.String(), data: Type.Optional(Type.Unknown()) },
  custom_message: {
    customType: Type.String(),
    content: Type.Union([Type.String(), Type.Array(Type.Unknown())]),
    display: Type.Boolean(),
    details: Type.Optional(Type.Unknown()),
    attribution: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('agent')])),
  },
  label: { targetId: Type.String({ minLength: 1 }), label: Type.Optional(Type.String()) },
  ttsr_injection: { injectedRules: Type.Array(Type.String()) },
  session_init: {
    systemPrompt: Type.String(),
    task: Type.String(),
    tools: Type.Array(Type.String()),
    outputSchema: Type.Optional(Type.Unknown()),
  },
  mode_change: { mode: Type.String(), data: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
  /**
   * Written by newer agent builds: the provider service tier in force, a tier name
   * (`"priority"`, `"flex"`, …), a per-family object (`{openai: "priority"}`) or `null` (none).
   * The context carries it as the readers do (`coerceServiceTier`).
   */
  service_tier_change: {
    serviceTier: Type.Optional(Type.Union([Type.String(), Type.Record(Type.String(), Type.String()), Type.Null()])),
  },
} as const

export type EntryType = keyof typeof entryFields
export const ENTRY_TYPES = Object.keys(entryFields) as EntryType[]

/**
 * An entry of a type this build does not know (newer agents add types all the time): any
 * string `type` other than the known ones and `session` (a header is never an entry). It is
 * stored untouched, placed in the tree and ignored by the context (§3.4).
 */
export const OtherEntrySchema = Type.Object({
  type: Type.String({
    minLength: 1,
    not: { enum: [...ENTRY_TYPES, 'session'] },
    description: 'Any type other than the known ones and `session`',
  }),
}, { additionalProperties: true, title: 'other' })

/** True for a `type` that names no known entry kind and is not the header's. */
export function isOtherEntryType (type: unknown): type is string {
  return typeof type === 'string' && type !== '' && type !== 'session' && !Object.hasOwn(entryFields, type)
}

const base = {
  id: Type.String({ minLength: 1 }),
  parentId: Type.Union([Type.String(), Type.Null()]),
  timestamp: Type.String(),
}

const entrySchema = <K extends EntryType>(type: K) =>
  Type.Object({ type: Type.Literal(type), ...base, ...entryFields[type] }, { additionalProperties: true })

export const MessageEntrySchema = entrySchema('message')
export const ThinkingLevelChangeEntrySchema = entrySchema('thinking_level_change')
export const ModelChangeEntrySchema = entrySchema('model_change')
export const CompactionEntrySchema = entrySchema('compaction')
export const BranchSummaryEntrySchema = entrySchema('branch_summary')
export const CustomEntrySchema = entrySchema('custom')
export const CustomMessageEntrySchema = entrySchema('custom_message')
export const LabelEntrySchema = entrySchema('label')
export const TtsrInjectionEntrySchema = entrySchema('ttsr_injection')
export const SessionInitEntrySchema = entrySchema('session_init')
export const ModeChangeEntrySchema = entrySchema('mode_change')
export const ServiceTierChangeEntrySchema = entrySchema('service_tier_change')

export type MessageEntry = Static<typeof MessageEntrySchema>
export type ThinkingLevelChangeEntry = Static<typeof ThinkingLevelChangeEntrySchema>
export type ModelChangeEntry = Static<typeof ModelChangeEntrySchema>
export type CompactionEntry = Static<typeof CompactionEntrySchema>
export type BranchSummaryEntry = Static<typeof BranchSummaryEntrySchema>
export type CustomEntry = Static<typeof CustomEntrySchema>
export type CustomMessageEntry = Static<typeof CustomMessageEntrySchema>
export type LabelEntry = Static<typeof LabelEntrySchema>
export type TtsrInjectionEntry = Static<typeof TtsrInjectionEntrySchema>
export type SessionInitEntry = Static<typeof SessionInitEntrySchema>
export type ModeChangeEntry = Static<typeof ModeChangeEntrySchema>
export type ServiceTierChangeEntry = Static<typeof ServiceTierChangeEntrySchema>

/** Base of every entry, including entries of types this build does not know (§3.4). */
export interface SessionEntryBase {
  type: string
  id: string
  parentId: string | null
  timestamp: string
  [key: string]: unknown
}

/**
 * An entry as the model holds it. Known types are narrowed by `type`; unknown types are kept
 * as plain `SessionEntryBase` records.
 */
export type SessionEntry =
  | MessageEntry | ThinkingLevelChangeEntry | ModelChangeEntry | CompactionEntry
  | BranchSummaryEntry | CustomEntry | CustomMessageEntry | LabelEntry
  | TtsrInjectionEntry | SessionInitEntry | ModeChangeEntry | ServiceTierChangeEntry

/** What `buildSessionContext` returns (SPEC.md §7.1). */
export interface SessionContext {
  messages: AgentMessage[]
  thinkingLevel: string
  models: Record<string, string>
  injectedTtsrRules: string[]
  mode: string
  modeData?: Record<string, unknown>
  /** Per provider family, from the last `service_tier_change` on the path (absent: none). */
  serviceTier?: Record<string, string>
}

/** A node of `getTree()` (SPEC.md §6.6). */
export interface SessionTreeNode {
  entry: SessionEntryBase
  children: SessionTreeNode[]
  label?: string
}
