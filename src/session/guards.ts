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

/** Defines an own data property, as an object spread does; a plain assignment would set the prototype for `__proto__`. */
export function setOwnField (target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}
