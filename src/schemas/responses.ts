/**
 * Building blocks of route response schemas that are not shared components: documented
 * response headers and the error statuses every JSON-body route can answer. Imports nothing
 * of ours.
 */
import { Type, type TSchema } from '@sinclair/typebox'

/**
 * Route schema key naming the operation of a route's `HEAD` twin, which shares the `GET` route's
 * schema (the OpenAPI plugin makes it the HEAD operation's `operationId`).
 */
export const HEAD_OPERATION_ID = 'x-head-operation-id'

/** Key that marks a response header schema as always sent (see `requiredHeader`). */
export const REQUIRED_HEADER = 'x-required'

/**
 * A response header the route always sends: documented with `required: true` (the OpenAPI
 * plugin moves the mark from the header's schema to the header object).
 */
export function requiredHeader<T extends TSchema> (schema: T): T {
  return { ...schema, [REQUIRED_HEADER]: true }
}

/** The `ETag` header of every answer about one session (API.md "Conventions"). */
export const ETagHeader = requiredHeader(Type.String({
  description: "The session's opaque etag as of this answer; send it back as `If-Match`",
}))

/** The `Location` header of a 201: the path of what was created. */
export const LocationHeader = requiredHeader(Type.String({ description: 'Path of the created resource' }))

/** What any route with a JSON body can answer besides its own errors: bad body, too large, wrong type. */
export const BODY_ERRORS = [400, 413, 415] as const
