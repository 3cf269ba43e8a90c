/**
 * The entry shapes of the HTTP contract, one named component per entry type (SPEC.md §3.5), so
 * that client generators give each type its own model: `<Type>Entry` as stored and returned,
 * `New<Type>Entry` as appended (without `id`, `parentId`, `timestamp`). `Entry` and `NewEntry`
 * are the unions of these. A type added to `entryFields` gets both components here; an entry
 * kind without fixed fields (such as any type this server does not know) is one more variant
 * in `ENTRY_VARIANTS` or `NEW_ENTRY_VARIANTS`.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox'
import { ref } from '../src/schemas/ref.js'
import { AgentMessageSchema, ENTRY_TYPES, entryFields, OtherEntrySchema, type EntryType } from '../src/session/types.js'

/** `thinking_level_change` → `ThinkingLevelChange`. */
const pascal = (type: string): string => type.split('_').map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')

/** The agent message a `message` entry carries: a string `role`, everything else opaque. */
export const AgentMessage = AgentMessageSchema

const fieldsOf = (type: EntryType): TProperties =>
  type === 'message' ? { message: ref(AgentMessage) } : entryFields[type] as TProperties

/** The fields the server assigns to every stored entry. */
const stored = {
  id: Type.String({ description: 'Entry id, unique in the session' }),
  parentId: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Parent entry id; `null` for a root' })),
  timestamp: Type.Optional(Type.String({ description: 'ISO 8601 instant of the append' })),
}

const storedVariant = (type: EntryType): TSchema => Type.Object(
  { type: Type.Literal(type), ...stored, ...fieldsOf(type) },
  { $id: `${pascal(type)}Entry`, additionalProperties: true, description: `A stored \`${type}\` entry (unknown keys kept)` },
)

const newVariant = (type: EntryType): TSchema => Type.Object(
  { type: Type.Literal(type), ...fieldsOf(type) },
  { $id: `New${pascal(type)}Entry`, additionalProperties: true, description: `A \`${type}\` entry to append` },
)

/** An entry of a type without a component of its own, kept as stored. */
export const OtherEntry = Type.Object(
  { type: Type.String({ description: 'The entry type' }), ...stored },
  { $id: 'OtherEntry', additionalProperties: true, description: 'An entry of another type, returned as stored' },
)

/** Every stored variant: one per known type, then the catch-all. */
export const ENTRY_VARIANTS: TSchema[] = [...ENTRY_TYPES.map(storedVariant), OtherEntry]

/** An entry of a type this server does not know, appended to be stored untouched. */
export const NewOtherEntry = Type.Object(OtherEntrySchema.properties, {
  $id: 'NewOtherEntry', additionalProperties: true, description: 'An entry of another type: stored untouched, ignored by the context',
})

/** Every variant a client may append: one per known type, then the catch-all. */
export const NEW_ENTRY_VARIANTS: TSchema[] = [...ENTRY_TYPES.map(newVariant), NewOtherEntry]

/** Any stored entry. `anyOf`: the catch-all also matches the known types. */
export const Entry = Type.Union(ENTRY_VARIANTS.map((variant) => ref(variant)), {
  $id: 'Entry', description: 'A stored entry: the fields of its type plus `id`, `parentId`, `timestamp`',
})

/** An entry as a client appends it. */
export const NewEntry = Type.Union(NEW_ENTRY_VARIANTS.map((variant) => ref(variant)), {
  $id: 'NewEntry', description: 'Any entry type of SPEC.md §3.5, `service_tier_change`, or any other type (stored untouched), without id, parentId and timestamp',
})

/** The components of this file, for `sharedSchemas()`. */
export const entryComponents = (): TSchema[] => [AgentMessage, ...ENTRY_VARIANTS, Entry, ...NEW_ENTRY_VARIANTS, NewEntry]
