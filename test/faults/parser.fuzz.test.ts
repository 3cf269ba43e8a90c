/**
 * Property tests of the lenient JSONL parser (SPEC.md §5.1): it never throws, agrees with a
 * step-by-step model of the spec, keeps every object line among any garbage in order, ignores
 * CRLF and a leading BOM, and a torn final line never costs an earlier record. The long version
 * is bench/faults/parser-fuzz.ts. Replay a failure with the seed fast-check prints.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseJsonlLenient } from '../../src/session/parser.js'
import { PARSER_PROPERTIES, modelParse } from './support/parser-properties.js'

const RUNS = 1500

describe('parseJsonlLenient under fuzzing', () => {
  it('never throws on any text, keeps only plain objects, and agrees with the spec model', () => {
    fc.assert(PARSER_PROPERTIES.neverThrows, { numRuns: RUNS })
  })

  it('every well-formed object line survives any garbage lines around it, in order', () => {
    fc.assert(PARSER_PROPERTIES.objectsSurviveGarbage, { numRuns: RUNS })
  })

  it('CRLF line ends and a leading BOM change nothing', () => {
    fc.assert(PARSER_PROPERTIES.crlfAndBomChangeNothing, { numRuns: RUNS })
  })

  it('a torn final line never removes an earlier record, and stays one skipped line before the next append', () => {
    fc.assert(PARSER_PROPERTIES.tornTailKeepsEarlier, { numRuns: RUNS })
  })

  it('the model itself tells the documented cases apart (so the oracle is not vacuous)', () => {
    const text = '\uFEFF{"a":1}\r\n42\n[1]\n{"a":2}{"a":3}\n{\n  "b": 1\n}\n\0\n{"c":\n   \n{"d":4}'
    expect(modelParse(text)).toEqual([{ a: 1 }, { d: 4 }])
    expect(parseJsonlLenient(text)).toEqual([{ a: 1 }, { d: 4 }])
  })
})
