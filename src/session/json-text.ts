/**
 * `JSON.stringify` (no replacer, no indentation) for values of any depth. V8's own recurses and
 * throws `RangeError: Maximum call stack size exceeded` somewhere between 3,000 and 5,000 levels,
 * depending on how deep the caller already is; entries from files of other writers may nest
 * deeper (the parser has no depth limit). The fast native call is tried first; only when it runs
 * out of stack does an iterative writer with the same output take over.
 */

/**
 * The one value whose text is held (see `rememberJson`), and that text. One slot: the text of a
 * new entry is wanted twice in the synchronous run that appends it (its stored line, its answer).
 */
let heldValue: object | undefined
let heldText: string | undefined

/**
 * `stringifyJson(value)`, also held until the next call, so that the next `stringifyJson` of the
 * same object returns the same text without writing it again. Only for a value that nobody
 * changes afterwards (a session's entries are never changed once appended).
 */
export function rememberJson (value: object): string | undefined {
  heldValue = undefined
  heldText = stringifyJson(value)
  heldValue = value
  return heldText
}

/** `JSON.stringify(value)`, whatever the depth of `value`. */
export function stringifyJson (value: unknown): string | undefined {
  if (value === heldValue && value !== undefined) return heldText
  try {
    return JSON.stringify(value)
  } catch (err) {
    if (!(err instanceof RangeError) || !/call stack/i.test(err.message)) throw err
    return stringifyIteratively(value)
  }
}

interface Frame {
  value: Record<string, unknown> | unknown[]
  keys: string[] | undefined
  next: number
  /** Whether a member was written (a comma goes before the next one). */
  wrote: boolean
}

/** `value.toJSON()` where there is one, as JSON.stringify does (the key is passed along). */
function prepared (value: unknown, key: string): unknown {
  const toJSON = (value as { toJSON?: unknown } | null)?.toJSON
  return typeof value === 'object' && value !== null && typeof toJSON === 'function' ? toJSON.call(value, key) : value
}

/** The text of a value that is not an object or array, `undefined` for what JSON omits. */
const leafText = (value: unknown): string | undefined => JSON.stringify(value)

const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] =>
  typeof value === 'object' && value !== null &&
  !(value instanceof Number || value instanceof String || value instanceof Boolean)

/** The same text as `JSON.stringify(value)`, built with an explicit stack. */
export function stringifyIteratively (root: unknown): string | undefined {
  const top = prepared(root, '')
  if (!isContainer(top)) return leafText(top)
  const out: string[] = []
  const ancestors = new Set<object>()
  const stack: Frame[] = []
  const open = (value: Record<string, unknown> | unknown[]): void => {
    if (ancestors.has(value)) throw new TypeError('Converting circular structure to JSON')
    ancestors.add(value)
    const keys = Array.isArray(value) ? undefined : Object.keys(value)
    out.push(keys === undefined ? '[' : '{')
    stack.push({ value, keys, next: 0, wrote: false })
  }
  open(top)
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    const length = frame.keys === undefined ? (frame.value as unknown[]).length : frame.keys.length
    if (frame.next >= length) {
      out.push(frame.keys === undefined ? ']' : '}')
      ancestors.delete(frame.value)
      stack.pop()
      continue
    }
    const index = frame.next++
    const key = frame.keys === undefined ? String(index) : frame.keys[index]!
    const child = prepared((frame.value as Record<string, unknown>)[key], key)
    const text = isContainer(child) ? '' : leafText(child)
    if (text === undefined && frame.keys !== undefined) continue // undefined, functions, symbols: omitted
    if (frame.wrote) out.push(',')
    frame.wrote = true
    if (frame.keys !== undefined) out.push(JSON.stringify(key), ':')
    if (isContainer(child)) open(child)
    else out.push(text ?? 'null')
  }
  return out.join('')
}

/**
 * A deep copy of JSON data (`structuredClone`), whatever its depth: beyond the native clone's
 * stack, a round trip through JSON text (`JSON.parse` does not recurse).
 */
export function deepCopy<T> (value: T): T {
  try {
    return structuredClone(value)
  } catch (err) {
    if (!(err instanceof RangeError)) throw err
    const text = stringifyIteratively(value)
    return (text === undefined ? undefined : JSON.parse(text)) as T
  }
}
