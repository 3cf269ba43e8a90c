/**
 * fast-check properties of `parseJsonlLenient` (SPEC.md §5.1), shared by
 * test/faults/parser.fuzz.test.ts and bench/faults/parser-fuzz.ts (which runs them longer).
 * Each property throws on a counterexample, so fc.assert reports it with its seed.
 */
import fc from 'fast-check'
import { parseJsonlLenient } from '../../../src/session/parser.js'

/** A compact JSON object line, as writers produce it (no "\n" inside: JSON escapes it). */
const compactLine = fc.oneof(
  fc.object({ maxDepth: 3, maxKeys: 5 }),
  fc.record({ type: fc.constantFrom('session', 'message', 'custom'), id: fc.string({ minLength: 1, maxLength: 16 }), text: fc.string({ unit: 'binary' }) }),
).map((o) => JSON.stringify(o))

/** An object line, sometimes padded with JSON whitespace (still exactly one object). */
export const objectLine = fc.oneof(
  { weight: 3, arbitrary: compactLine },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(' ', '\t', '\r', ' \t'), compactLine, fc.constantFrom('', ' ', '\t')).map(([a, l, b]) => a + l + b) },
)

/** A line (no "\n") that must not parse to an object: torn lines, scalars, arrays, noise. */
export const garbageLine = fc.oneof(
  compactLine.chain((l) => fc.nat({ max: l.length - 1 }).map((n) => l.slice(0, n))), // torn write
  fc.jsonValue().filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)).map((v) => JSON.stringify(v)),
  fc.tuple(objectLine, objectLine).map(([x, y]) => x + y), // two values on one line
  fc.object({ maxDepth: 2, maxKeys: 4 }).chain((o) => fc.constantFrom(...JSON.stringify(o, null, 2).split('\n'))), // pretty-printed
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('\0', '\r', ' ', '\t', '{', '}', '"', '\uFEFF', '\u2028', 'x') }),
).map((l) => l.replaceAll('\n', '')).filter((l) => !isObjectLine(l))

/** Any line at all, without "\n". */
export const anyLine = fc.oneof(objectLine, garbageLine)

/** The spec's rule for one line, written independently of the implementation (§5.1 steps 2–4). */
export function isObjectLine (line: string): boolean {
  const l = line.endsWith('\r') ? line.slice(0, -1) : line
  if (l.trim() === '') return false
  try {
    const v: unknown = JSON.parse(l)
    return typeof v === 'object' && v !== null && !Array.isArray(v)
  } catch {
    return false
  }
}

/** The spec's parser, step by step, as an oracle. */
export function modelParse (text: string): unknown[] {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text
  return body.split('\n').filter(isObjectLine).map((l) => JSON.parse(l.endsWith('\r') ? l.slice(0, -1) : l) as unknown)
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)
function assertSame (actual: unknown, expected: unknown, what: string): void {
  if (!same(actual, expected)) throw new Error(`${what}: ${JSON.stringify(actual)} !== ${JSON.stringify(expected)}`)
}

/** Arbitrary text (also lone surrogates, NULs, CRs): never throws, keeps only plain objects, agrees with the model. */
export const neverThrows = fc.property(
  fc.oneof(fc.string({ unit: 'binary' }), fc.array(anyLine).map((ls) => ls.join('\n'))),
  (text) => {
    const records = parseJsonlLenient(text)
    for (const r of records) if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new Error('kept a non-object')
    assertSame(records, modelParse(text), 'differs from the spec model')
  },
)

/** Object lines survive any garbage lines around them, in order. */
export const objectsSurviveGarbage = fc.property(
  fc.array(fc.tuple(fc.array(garbageLine, { maxLength: 3 }), objectLine), { maxLength: 12 }),
  fc.array(garbageLine, { maxLength: 3 }),
  (groups, trailing) => {
    const lines = [...groups.flatMap(([garbage, obj]) => [...garbage, obj]), ...trailing]
    fc.pre(!(lines[0] ?? '').startsWith('\uFEFF')) // a file-level BOM is dropped (covered below)
    const expected = groups.map(([, obj]) => JSON.parse(obj) as unknown)
    assertSame(parseJsonlLenient(lines.join('\n')), expected, 'objects among garbage')
  },
)

/** CRLF line ends and a leading BOM change nothing. */
export const crlfAndBomChangeNothing = fc.property(
  fc.array(anyLine, { maxLength: 12 }),
  fc.boolean(),
  (lines, finalNewline) => {
    const text = lines.join('\n') + (finalNewline ? '\n' : '')
    fc.pre(!text.startsWith('\uFEFF'))
    const plain = parseJsonlLenient(text)
    assertSame(parseJsonlLenient(text.replaceAll('\n', '\r\n')), plain, 'CRLF')
    assertSame(parseJsonlLenient('\uFEFF' + text), plain, 'BOM')
    assertSame(parseJsonlLenient('\uFEFF' + text.replaceAll('\n', '\r\n')), plain, 'BOM + CRLF')
  },
)

/** A torn final line (any strict prefix of a line, or noise) never removes an earlier record. */
export const tornTailKeepsEarlier = fc.property(
  fc.array(anyLine, { maxLength: 12 }),
  fc.oneof(compactLine.chain((l) => fc.nat({ max: l.length - 1 }).map((n) => l.slice(0, n))), garbageLine),
  fc.constantFrom('\n', '\r\n'),
  (lines, torn, eol) => {
    const whole = lines.map((l) => l + eol).join('')
    fc.pre(!(whole + torn).startsWith('\uFEFF'))
    const before = parseJsonlLenient(whole)
    assertSame(parseJsonlLenient(whole + torn), before, 'torn tail')
    // And the tail as a line of its own, as the write queue leaves it before the next append.
    const next = { type: 'message', id: 'after' }
    assertSame(parseJsonlLenient(whole + torn + '\n' + JSON.stringify(next) + '\n'), [...before, next], 'torn line then an append')
  },
)

export const PARSER_PROPERTIES = { neverThrows, objectsSurviveGarbage, crlfAndBomChangeNothing, tornTailKeepsEarlier }
