/**
 * Schemas shared between routes: each has an `$id`, is added once at the root, and is used
 * through `ref()` so that OpenAPI lists it once under `components.schemas` (STYLE.md §4).
 *
 * To share a schema, give it an `$id` and list it in its file's components function (or here).
 */
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { Problem } from '../errors.js'
import { blobRouteComponents } from '../../routes/blobs.schema.js'
import { entryRouteComponents } from '../../routes/entries.schema.js'
import { entryComponents } from '../../routes/entry-types.schema.js'
import { healthRouteComponents } from '../../routes/health.schema.js'
import { sessionRouteComponents } from '../../routes/sessions.schema.js'
import { tokenRouteComponents } from '../../routes/tokens.schema.js'

export { Problem }

/**
 * A typed reference to a shared schema: validates and documents as `{ $ref: <$id> }` and types
 * as the schema itself. `Type.Ref(schema)` is deprecated in TypeBox 0.34.
 * A function declaration, so that it is usable while this module is still loading (import cycles).
 */
export function ref<T extends TSchema> (schema: T): TUnsafe<Static<T>> {
  if (schema.$id === undefined) throw new TypeError('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id))
}

/**
 * Every shared schema, in the order they are added. A function rather than a constant: schema
 * files import `ref` from here while this file imports them, so the list is read only once the
 * app is built, after every module has loaded.
 */
export function sharedSchemas (): TSchema[] {
  return [
    Problem,
    ...healthRouteComponents(),
    ...sessionRouteComponents(),
    ...entryComponents(),
    ...entryRouteComponents(),
    ...blobRouteComponents(),
    ...tokenRouteComponents(),
  ]
}

/** Adds every shared schema to `app` (call once, at the root, before registering routes). */
export function registerSharedSchemas (app: { addSchema: (schema: TSchema) => unknown }): void {
  for (const schema of sharedSchemas()) app.addSchema(schema)
}
