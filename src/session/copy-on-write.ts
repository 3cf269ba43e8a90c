/**
 * One iterative copy-on-write walk over JSON-like data, for the transforms that rewrite entries
 * (the write path's §9.2/§9.3 transform, the `?blobs=ref` view). Entries from files of other
 * writers may nest far deeper than a request body may (thousands of levels), so the walk keeps
 * its own stack instead of recursing: no depth overflows it. Unchanged sub-trees are shared, a
 * container that changed is copied with its key order, and the input is never mutated.
 */

import { setOwnField } from './guards.js'

/** Returned by `enter` to walk into an object or array instead of replacing it. */
export const DESCEND: unique symbol = Symbol('descend')

export interface CopyOnWriteRules {
  /**
   * What `value` becomes (returned as is when unchanged), or `DESCEND` to walk into it (only
   * for objects and arrays). `inContent`: the value is an element of an array that is the
   * value of a `content` key, or of an array nested directly in one (SPEC.md §9.3). `key`: the
   * object key `value` is held under (`undefined` for an array element or the root).
   */
  enter: (value: unknown, inContent: boolean, key: string | undefined) => unknown
  /**
   * What a walked container becomes: `copy` is its copy when something below changed, else
   * `undefined`. Default: `copy ?? source`.
   */
  exit?: (source: object, copy: object | undefined, inContent: boolean) => unknown
  /** Object keys removed wherever they occur. */
  dropKey?: (key: string) => boolean
}

interface Frame {
  source: Record<string, unknown> | unknown[]
  /** Keys of an object, `undefined` for an array. */
  keys: string[] | undefined
  /** Index of the next child. */
  next: number
  copy: Record<string, unknown> | unknown[] | undefined
  inContent: boolean
}

function frameOf (value: object, inContent: boolean): Frame {
  const keys = Array.isArray(value) ? undefined : Object.keys(value)
  return { source: value as Frame['source'], keys, next: 0, copy: undefined, inContent }
}

/** Starts `frame`'s copy with its first `n` children, all unchanged so far. */
function copyPrefix (frame: Frame, n: number): Record<string, unknown> | unknown[] {
  if (frame.keys === undefined) return (frame.source as unknown[]).slice(0, n)
  const source = frame.source as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (let i = 0; i < n; i++) setOwnField(out, frame.keys[i]!, source[frame.keys[i]!])
  return out
}

/** Records child `index` of `frame` as `result` (its original being `original`). */
function settle (frame: Frame, index: number, original: unknown, result: unknown): void {
  if (result !== original && frame.copy === undefined) frame.copy = copyPrefix(frame, index)
  if (frame.copy === undefined) return
  if (frame.keys === undefined) (frame.copy as unknown[]).push(result)
  else setOwnField(frame.copy as Record<string, unknown>, frame.keys[index]!, result)
}

/** `root` transformed by `rules`, walked depth-first without recursion. */
export function copyOnWrite (root: unknown, rules: CopyOnWriteRules, rootInContent = false): unknown {
  const first = rules.enter(root, rootInContent, undefined)
  if (first !== DESCEND) return first
  const exit = rules.exit ?? ((source: object, copy: object | undefined) => copy ?? source)
  const stack: Frame[] = [frameOf(root as object, rootInContent)]
  for (;;) {
    const frame = stack[stack.length - 1]!
    const length = frame.keys === undefined ? (frame.source as unknown[]).length : frame.keys.length
    if (frame.next < length) {
      const index = frame.next++
      const key = frame.keys?.[index]
      if (key !== undefined && rules.dropKey?.(key) === true) {
        frame.copy ??= copyPrefix(frame, index)
        continue
      }
      const child = key === undefined ? (frame.source as unknown[])[index] : (frame.source as Record<string, unknown>)[key]
      const inContent = key === undefined ? frame.inContent : key === 'content' && Array.isArray(child)
      const result = rules.enter(child, inContent, key)
      if (result === DESCEND) stack.push(frameOf(child as object, inContent))
      else settle(frame, index, child, result)
      continue
    }
    stack.pop()
    const result = exit(frame.source, frame.copy, frame.inContent)
    const parent = stack[stack.length - 1]
    if (parent === undefined) return result
    const index = parent.next - 1
    const original = parent.keys === undefined ? (parent.source as unknown[])[index] : (parent.source as Record<string, unknown>)[parent.keys[index]!]
    settle(parent, index, original, result)
  }
}
