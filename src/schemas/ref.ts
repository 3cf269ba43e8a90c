/**
 * References to shared schemas (STYLE.md §4): a schema with an `$id` is added once at the root
 * (shared.ts) and used through `ref()`, so that OpenAPI lists it once under
 * `components.schemas`. Imports nothing of ours, so that every schema file may use it.
 */
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox'

/**
 * A typed reference to a shared schema: validates and documents as `{ $ref: <$id> }` and types
 * as the schema itself. `Type.Ref(schema)` is deprecated in TypeBox 0.34.
 */
export function ref<T extends TSchema> (schema: T): TUnsafe<Static<T>> {
  if (schema.$id === undefined) throw new TypeError('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id))
}
