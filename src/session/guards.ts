/**
 * Small type guards shared by the pure session-model files. JSON values only: no class
 * instances ever reach these functions.
 */

/** A JSON object: non-null, not an array. */
export function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A string with at least one code unit. */
export function isNonEmptyString (value: unknown): value is string {
  return typeof value === 'string' && value !== ''
}
