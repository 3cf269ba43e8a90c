/**
 * Numbers in JSON text that a double cannot hold as sent. `JSON.parse` makes every number a
 * double, and the session model stores what it parsed: `1e309` would be stored as `null`
 * (Infinity has no JSON), `12345678901234567890` as `12345678901234567000`, `1e-400` as `0`.
 * A number is exact when the double it parses to denotes the same decimal value as its text
 * (`1.0`, `1e2` and `-0` are exact: written back as `1`, `100` and `0`, the same values), which
 * is what every JSON writer that works from doubles sends. The body parser refuses the others
 * with 400 `SS_INEXACT_NUMBER` naming their JSON path (src/plugins/body-parsers.ts).
 *
 * The scan reads the raw text without parsing it again: it skips strings with `indexOf` and
 * looks only at number tokens; a token of at most 15 characters without an exponent (at most
 * 15 significant digits, within a double's normal range) is exact without converting it.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c
const MINUS = 0x2d
const PLUS = 0x2b
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39
const LOWER_E = 0x65
const UPPER_E = 0x45
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c

/** Decimal digits a double always round-trips (DBL_DIG). */
const SAFE_DIGITS = 15

const isDigit = (c: number): boolean => c >= ZERO && c <= NINE
const inNumber = (c: number): boolean => isDigit(c) || c === DOT || c === LOWER_E || c === UPPER_E || c === MINUS || c === PLUS

/** `text` of a JSON number as `<sign><digits>e<exponent>` with the value 0.<digits> × 10^exponent, or `0`. */
function decimalOf (text: string): string {
  let s = text
  const negative = s.startsWith('-')
  if (negative) s = s.slice(1)
  let exponent = 0
  const e = s.search(/[eE]/)
  if (e !== -1) {
    exponent = Number(s.slice(e + 1))
    s = s.slice(0, e)
  }
  const dot = s.indexOf('.')
  const whole = dot === -1 ? s : s.slice(0, dot)
  let digits = whole + (dot === -1 ? '' : s.slice(dot + 1))
  exponent += whole.length
  // Loops, not /0+$/: a regular expression would retry every zero of a long inner run (quadratic).
  let leading = 0
  while (digits.charCodeAt(leading) === ZERO) leading++
  let end = digits.length
  while (end > leading && digits.charCodeAt(end - 1) === ZERO) end--
  digits = digits.slice(leading, end)
  return digits === '' ? '0' : `${negative ? '-' : ''}${digits}e${exponent - leading}`
}

/** True when the JSON number `token` parses to a double of exactly its decimal value. */
export function isExactNumber (token: string): boolean {
  const value = Number(token)
  return Number.isFinite(value) && decimalOf(token) === decimalOf(String(value))
}

/** The index just past the string whose opening quote is at `at` (`text.length` when it never closes). */
function endOfString (text: string, at: number): number {
  let close = text.indexOf('"', at + 1)
  while (close !== -1) {
    let backslashes = 0
    while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return close + 1
    close = text.indexOf('"', close + 1)
  }
  return text.length
}

/** A number of the text that is not exact: where its token starts, and the token. */
export interface InexactNumberToken { at: number, token: string }

/**
 * The first number token of `text` (JSON, or JSONL with `perLine`) that is not exact, or
 * undefined. Text outside strings is taken to be JSON; with `perLine`, each line is scanned on
 * its own (a torn line cannot hide the next one in a string), and a token on a line that is not
 * JSON at all is passed over: such a line is no entry, and its parser says so.
 */
export function firstInexactNumber (text: string, perLine = false): InexactNumberToken | undefined {
  let lineEnd = perLine ? lineEndFrom(text, 0) : text.length
  for (let i = 0; i < text.length;) {
    if (i >= lineEnd) {
      i = lineEnd + 1
      lineEnd = lineEndFrom(text, i)
      continue
    }
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = endOfString(text, i)
      // An unterminated string on a torn line ends with its line.
      if (i > lineEnd) i = lineEnd
    } else if (c === MINUS || isDigit(c)) {
      let end = i + 1
      let exponent = false
      for (let d = text.charCodeAt(end); inNumber(d); d = text.charCodeAt(++end)) if (d === LOWER_E || d === UPPER_E) exponent = true
      if ((end - i > SAFE_DIGITS || exponent) && !isExactNumber(text.slice(i, end))) {
        if (!perLine || isJson(text.slice(lineStartOf(text, i), lineEnd))) return { at: i, token: text.slice(i, end) }
        i = lineEnd
        continue
      }
      i = end
    } else {
      i++
    }
  }
  return undefined
}

function lineEndFrom (text: string, at: number): number {
  const end = text.indexOf('\n', at)
  return end === -1 ? text.length : end
}

const lineStartOf = (text: string, at: number): number => text.lastIndexOf('\n', at) + 1

function isJson (line: string): boolean {
  try {
    JSON.parse(line)
    return true
  } catch {
    return false
  }
}

/** RFC 6901 escaping of one JSON Pointer segment. */
const segment = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1')

/**
 * Where the value starting at `at` sits in the JSON text `text`: its JSON Pointer (`/entries/0/data`,
 * `` for the whole document), preceded by `line <n> ` (1-based) for JSONL with `perLine`. Slow
 * (it walks everything before `at`): for error messages only.
 */
export function jsonPathAt (text: string, at: number, perLine = false): string {
  const start = perLine ? lineStartOf(text, at) : 0
  const stack: Array<{ array: boolean, index: number, key: string }> = []
  let expectKey = false
  for (let i = start; i < at;) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = endOfString(text, i)
      const top = stack[stack.length - 1]
      if (expectKey && top !== undefined) top.key = keyOf(text.slice(i, end))
      expectKey = false
      i = end
      continue
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      stack.push({ array: c === OPEN_BRACKET, index: 0, key: '' })
      expectKey = c === OPEN_BRACE
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      stack.pop()
    } else if (c === COMMA) {
      const top = stack[stack.length - 1]
      if (top?.array === true) top.index++
      else expectKey = true
    }
    i++
  }
  const pointer = stack.map((f) => '/' + (f.array ? String(f.index) : segment(f.key))).join('')
  if (!perLine) return pointer
  const line = text.slice(0, start).split('\n').length
  return `line ${line} ${pointer}`.trimEnd()
}

function keyOf (quoted: string): string {
  try {
    return String(JSON.parse(quoted))
  } catch {
    return quoted.slice(1, -1)
  }
}

/** How a token is quoted in an error: at most 40 characters of it. */
export function tokenPreview (token: string): string {
  return token.length <= 40 ? token : `${token.slice(0, 20)}…, ${token.length} characters`
}
