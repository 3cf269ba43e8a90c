/** Large answers streamed as they are serialized are exactly `JSON.stringify` of the value. */
import { describe, expect, it } from 'vitest'
import { jsonByteChunks, jsonChunks, jsonStream } from '../../src/http/json-stream.js'
import { stringifyIteratively } from '../../src/session/json-text.js'

const text = async (stream: AsyncIterable<Buffer | string>): Promise<string> => {
  const parts: Buffer[] = []
  for await (const part of stream) parts.push(Buffer.from(part))
  return Buffer.concat(parts).toString('utf8')
}

describe('jsonChunks', () => {
  const cases: Array<[string, object]> = [
    ['empty array', { messages: [], mode: 'x' }],
    ['array not first, undefined and function values left out', { a: 1, messages: [{ b: 'é\n"' }, null, 2], skip: undefined, fn: () => 1, z: { y: [1] } }],
    ['undefined array elements become null', { messages: [undefined, { x: undefined }, 'ü'] }],
    ['toJSON of elements and properties', { when: new Date(0), messages: [new Date(1), { toJSON: () => 'j' }] }],
    ['no array under the key', { messages: 'not an array', other: [1, 2] }],
    ['empty object', {}],
  ]

  it.each(cases)('%s', (_name, value) => {
    expect([...jsonChunks(value, 'messages')].join('')).toBe(JSON.stringify(value))
  })

  it('cuts a long array into chunks of about the given size, identical once joined', () => {
    const value = { messages: Array.from({ length: 1000 }, (_, i) => ({ role: 'user', text: `m${i} ${'x'.repeat(100)}` })), thinkingLevel: 'off' }
    const chunks = [...jsonChunks(value, 'messages', 4096)]
    // Each chunk but the last reaches the size and passes it by less than one batch of elements
    // (a quarter of the size, and one element of ~120 characters when a batch runs over).
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.length).toBeGreaterThanOrEqual(4096)
      expect(chunk.length).toBeLessThan(4096 + 1024 + 200)
    }
    expect(chunks.at(-1)?.length).toBeLessThan(4096)
    expect(chunks.join('')).toBe(JSON.stringify(value))
  })

  it('packs the bytes into buffers of at most the given size (the piece holding a larger element alone), whatever the characters', () => {
    const value = {
      messages: Array.from({ length: 400 }, (_, i) => ({ text: `${i} ${'é✓😀x'.repeat(i % 37)}` })).concat([{ text: 'ü'.repeat(5000) }]),
      mode: 'ë',
    }
    const chunks = [...jsonByteChunks(value, 'messages', 1024)]
    expect(chunks.length).toBeGreaterThan(20)
    // Only the batch holding the large element gets a buffer of its own, a larger one.
    const big = JSON.stringify({ text: 'ü'.repeat(5000) })
    const larger = chunks.filter((chunk) => chunk.length > 1024)
    expect(larger).toHaveLength(1)
    expect(larger[0]?.toString('utf8')).toContain(big)
    expect(larger[0]?.length).toBeLessThan(Buffer.byteLength(big) + 1024)
    expect(Buffer.concat(chunks).toString('utf8')).toBe(JSON.stringify(value))
    for (const [, other] of cases) expect(Buffer.concat([...jsonByteChunks(other, 'messages', 16)]).toString('utf8')).toBe(JSON.stringify(other))
  })

  it('joins small and large elements into pieces of about a quarter of the chunk, the same text as one call', () => {
    // Small elements (many to a piece), then large ones (one or two), then small again.
    const sizes = [...Array<number>(300).fill(10), ...Array<number>(20).fill(3000), ...Array<number>(300).fill(10)]
    const value = { messages: sizes.map((n, i) => ({ i, text: 'y'.repeat(n) })), after: true }
    const chunks = [...jsonChunks(value, 'messages', 8192)]
    expect(chunks.join('')).toBe(JSON.stringify(value))
    for (const chunk of chunks.slice(0, -1)) expect(chunk.length).toBeLessThan(8192 + 2048 + 3100)
  })

  it('serializes an element too deep for the native call among others, as the depth-safe writer does', () => {
    let deep: unknown = 'leaf'
    for (let i = 0; i < 20_000; i++) deep = [deep]
    const value = { messages: [{ a: 1 }, { b: 2 }, deep, { c: 3 }, ...Array.from({ length: 50 }, (_, i) => ({ i }))] }
    expect(() => JSON.stringify(value)).toThrow(RangeError)
    expect([...jsonChunks(value, 'messages', 1 << 20)].join('')).toBe(stringifyIteratively(value))
  })

  it('streams the same bytes', async () => {
    const value = { messages: [{ a: 'ünïcode ✓' }], models: {} }
    expect(await text(jsonStream(value, 'messages'))).toBe(JSON.stringify(value))
  })
})
