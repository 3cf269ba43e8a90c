/**
 * Schemas shared between routes: each has an `$id`, is added once at the root, and is used
 * through `ref()` (ref.ts) so that OpenAPI lists it once under `components.schemas` (STYLE.md §4).
 * Only the app imports this file; schema files import `ref` from ref.ts, so no import circles.
 *
 * To share a schema, give it an `$id` and list it in its file's components function (or here).
 */
import type { TSchema } from '@sinclair/typebox'
import { Problem } from '../errors.js'
import { blobRouteComponents } from '../../routes/blobs.schema.js'
import { entryRouteComponents } from '../../routes/entries.schema.js'
import { entryComponents } from '../../routes/entry-types.schema.js'
import { healthRouteComponents } from '../../routes/health.schema.js'
import { hygieneRouteComponents } from '../../routes/hygiene.schema.js'
import { recordRouteComponents } from '../../routes/records.schema.js'
import { searchRouteComponents } from '../../routes/search.schema.js'
import { sessionRouteComponents } from '../../routes/sessions.schema.js'
import { tokenRouteComponents } from '../../routes/tokens.schema.js'

export { Problem }

/** Every shared schema, in the order they are added. */
export function sharedSchemas (): TSchema[] {
  return [
    Problem,
    ...healthRouteComponents(),
    ...sessionRouteComponents(),
    ...searchRouteComponents(),
    ...entryComponents(),
    ...entryRouteComponents(),
    ...recordRouteComponents(),
    ...blobRouteComponents(),
    ...tokenRouteComponents(),
    ...hygieneRouteComponents(),
  ]
}

/** Adds every shared schema to `app` (call once, at the root, before registering routes). */
export function registerSharedSchemas (app: { addSchema: (schema: TSchema) => unknown }): void {
  for (const schema of sharedSchemas()) app.addSchema(schema)
}
