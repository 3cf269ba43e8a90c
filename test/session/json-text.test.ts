/** `stringifyJson` writes what `JSON.stringify` writes, at any depth. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { stringifyIteratively, stringifyJson } from '../../src/session/json-text.js'

describe('stringifyIteratively', () => {
  it('matches JSON.stringify on any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => stringifyIteratively(value) === JSON.stringify(value)), { numRuns: 500 })
  })

  it('matches JSON.stringify on what JSON omits or converts', () => {
    const odd = { a: undefined, b: () => 1, c: [undefined, () => 1, Symbol('s')], d: new Date(0), e: NaN, f: -0, g: { toJSON: (k: string) => `key ${k}` }, h: Object('s'), ['__proto__']: 1 }
    for (const value of [odd, [], {}, 'x', 1, null, undefined, [odd, [odd]]]) expect(stringifyIteratively(value)).toBe(JSON.stringify(value))
  })

  it('refuses a cycle like JSON.stringify', () => {
    const a: Record<string, unknown> = {}
    a.self = { a }
    expect(() => stringifyIteratively(a)).toThrow(TypeError)
  })
})

describe('stringifyJson', () => {
  it('writes a value 100,000 levels deep, where JSON.stringify runs out of stack', () => {
    const depth = 100_000
    const text = `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`
    const value: unknown = JSON.parse(text)
    expect(() => JSON.stringify(value)).toThrow(RangeError)
    expect(stringifyJson(value)).toBe(text)
  })
})
