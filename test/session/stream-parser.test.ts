/** The streaming lenient parser and the chunked file read give exactly what the whole-text path gives (SPEC.md §5.1–§5.3). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { isEmptyContent, JsonlStreamParser, parseJsonlLenient } from '../../src/session/parser.js'
import { parseFile, parseText, readAhead } from '../../src/session/session-loader.js'
import { FileSessionStorage, MemorySessionStorage } from '../../src/storage/index.js'

/** `text` cut at the given positions. */
function pieces (text: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
  const out: string[] = []
  let from = 0
  for (const c of at) { out.push(text.slice(from, c)); from = c }
  out.push(text.slice(from))
  return out
}

const line = fc.oneof(
  fc.constant(''), fc.constant('   '), fc.constant('\r'), fc.constant('\uFEFF'), fc.constant('42'), fc.constant('[1]'),
  fc.constant('{"a":1}{"a":2}'), fc.constant('{"torn":'), fc.constant('\u00a0{"x":1}'),
  fc.record({ type: fc.constantFrom('session', 'message', 'label'), id: fc.string() }).map((o) => JSON.stringify(o)),
  fc.string().map((s) => JSON.stringify({ text: s })),
  fc.string(),
)
const text = fc.tuple(fc.boolean(), fc.array(line, { maxLength: 12 }), fc.constantFrom('\n', '\r\n'), fc.boolean())
  .map(([bom, lines, eol, trailing]) => (bom ? '\uFEFF' : '') + lines.join(eol) + (trailing ? eol : ''))

describe('JsonlStreamParser', () => {
  it('parses any text cut anywhere exactly as parseJsonlLenient parses it whole', () => {
    fc.assert(fc.property(text, fc.array(fc.nat(), { maxLength: 6 }), (t, cuts) => {
      const parser = new JsonlStreamParser()
      for (const piece of pieces(t, cuts)) parser.push(piece)
      expect(parser.end()).toEqual(parseJsonlLenient(t))
      const firstLine = t.replace(/^\uFEFF/, '').split('\n')[0] as string
      expect(parser.firstLine).toEqual(parseJsonlLenient(firstLine)[0])
      expect(parser.blank).toBe(isEmptyContent(t))
      if (t !== '') expect(parser.lastChar === '\n').toBe(t.endsWith('\n'))
    }), { numRuns: 500 })
  })

  it('marks as possible ref holders exactly the records whose line holds `sha256:` or a \\u escape, however the text is cut', () => {
    const refLine = fc.oneof(
      line,
      fc.constant(`{"data":"blob:sha256:${'a'.repeat(64)}"}`),
      fc.constant('{"data":"\\u0062lob:sha256:x"}'),
      fc.constant('{"data":"C:\\\\users"}'),
      fc.constant('{"t":"sha256"}'),
      fc.string().map((s) => JSON.stringify({ text: `${s}sha256:${s}` })),
    )
    const refText = fc.tuple(fc.array(refLine, { maxLength: 10 }), fc.boolean()).map(([lines, trailing]) => lines.join('\n') + (trailing ? '\n' : ''))
    fc.assert(fc.property(refText, fc.array(fc.nat(), { maxLength: 6 }), (t, cuts) => {
      const parser = new JsonlStreamParser()
      for (const piece of pieces(t, cuts)) parser.push(piece)
      const records = parser.end()
      // The lines that parse to a record, in order, beside their records.
      const lines = t.split('\n').filter((l) => parseJsonlLenient(l).length === 1)
      expect(lines).toHaveLength(records.length)
      records.forEach((record, i) => {
        expect(parser.refCandidates.has(record)).toBe(/sha256:|\\u/.test(lines[i] as string))
      })
    }), { numRuns: 500 })
  })

  it('classifies through parseText as the whole-text rules do: empty, torn tail, first line', () => {
    expect(parseText('\uFEFF \r\n\t')).toMatchObject({ missing: false, empty: true, records: [] })
    expect(parseText('{"type":"session","id":"s"}\n{"type":"x","id":"1"}')).toMatchObject({ empty: false, tornTail: true, first: { id: 's' } })
    expect(parseText('junk\n{"type":"session","id":"s"}\n')).toMatchObject({ tornTail: false, first: undefined, records: [{ id: 's' }] })
  })
})

describe('parseFile', () => {
  let dir = ''
  afterEach(() => { if (dir !== '') rmSync(dir, { recursive: true, force: true }) })

  it('reads a large file in pieces (multi-byte characters across every piece boundary) to what readText gives', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ss-chunks-'))
    const path = join(dir, 's.jsonl')
    const lines = ['{"type":"session","id":"s","version":3}']
    // 3-byte and 4-byte characters, so that 64 KiB and 1 MiB boundaries fall inside characters.
    for (let i = 0, length = 0; length < 2_500_000; i++) {
      const next = JSON.stringify({ type: 'message', id: String(i), t: '€😀é'.repeat(i % 97) + 'x'.repeat(i % 13) })
      lines.push(next)
      length += next.length + 1
    }
    const content = lines.join('\n') + '\n{"torn":'
    writeFileSync(path, content)
    const storage = new FileSessionStorage()
    const chunks: string[] = []
    for await (const chunk of storage.readTextChunks(path)) chunks.push(chunk)
    // Decoded 64 KiB at a time (a character cut at a piece's end is decoded whole with the next).
    const bytes = Buffer.byteLength(content)
    expect(chunks).toHaveLength(Math.ceil(bytes / (64 * 1024)))
    expect(chunks.filter((c) => Buffer.byteLength(c) > 64 * 1024 + 3)).toEqual([])
    expect(chunks.join('')).toBe(await storage.readText(path))
    const parsed = await parseFile(storage, path)
    expect(parsed.records).toEqual(parseJsonlLenient(content))
    expect(parsed.tornTail).toBe(true)
    expect(parsed.first).toEqual({ type: 'session', id: 's', version: 3 })
  })

  it('reports a missing file as missing, with either storage', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ss-chunks-'))
    expect((await parseFile(new FileSessionStorage(), join(dir, 'nope.jsonl'))).missing).toBe(true)
    expect((await parseFile(new MemorySessionStorage(), join(dir, 'nope.jsonl'))).missing).toBe(true)
  })
})

describe('readAhead', () => {
  /** A source that logs when each piece is asked for and handed out, and whether it was closed. */
  const source = (n: number, log: string[], failAt = -1): AsyncIterable<number> => ({
    async * [Symbol.asyncIterator] () {
      try {
        for (let i = 0; i < n; i++) {
          log.push(`read ${i}`)
          await Promise.resolve()
          if (i === failAt) throw new Error(`read ${i} failed`)
          yield i
        }
      } finally {
        log.push('closed')
      }
    },
  })

  it('hands out every piece in order, the next one already asked for', async () => {
    const log: string[] = []
    for await (const piece of readAhead(source(3, log))) log.push(`got ${piece}`)
    expect(log).toEqual(['read 0', 'read 1', 'got 0', 'read 2', 'got 1', 'closed', 'got 2'])
  })

  it('throws a failed read where that piece would have come, and closes the source when the reader stops early', async () => {
    const log: string[] = []
    const got: number[] = []
    await expect((async () => { for await (const piece of readAhead(source(5, log, 2))) got.push(piece) })()).rejects.toThrow('read 2 failed')
    expect(got).toEqual([0, 1])
    const early: string[] = []
    for await (const piece of readAhead(source(5, early))) if (piece === 1) break
    expect(early.at(-1)).toBe('closed')
    expect(early.filter((e) => e.startsWith('read'))).toEqual(['read 0', 'read 1', 'read 2'])
  })
})
