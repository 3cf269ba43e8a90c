/**
 * Nesting depth of JSON text, measured without parsing. Bodies nested deeper than
 * `MAX_JSON_DEPTH` are refused as invalid input (400): the session model and the serializer
 * walk values recursively, so such a body could otherwise only fail later, with a 5xx.
 */

/** Deepest nesting of objects and arrays a request body may have (a flat object is depth 1). */
export const MAX_JSON_DEPTH = 1000

const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c
const NEWLINE = 0x0a

/**
 * True when `text` nests objects or arrays deeper than `max`. With `perLine` (JSONL), every line
 * is measured on its own, so that a torn line cannot add to the depth of the lines after it.
 * Brackets inside strings do not count. Malformed text is measured as far as it goes.
 */
export function nestedDeeperThan (text: string, max: number, perLine = false): boolean {
  // Depth never exceeds the number of opening brackets: most bodies are settled by counting
  // them with native `indexOf` scans, without the character-by-character walk below.
  if (openingBracketsAtMost(text, max)) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (perLine && c === NEWLINE) {
      depth = 0
      inString = false
    } else if (inString) {
      // A backslash escapes the next character, but never a newline between JSONL lines: a
      // torn line ending in `"\` must not hide the next line inside its string.
      if (c === BACKSLASH && !(perLine && text.charCodeAt(i + 1) === NEWLINE)) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) {
      inString = true
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--
    }
  }
  return false
}

/** True when `text` holds at most `max` `{` and `[` in all (strings included). */
function openingBracketsAtMost (text: string, max: number): boolean {
  let count = 0
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++count > max) return false
    }
  }
  return true
}
