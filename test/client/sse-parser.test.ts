/**
 * The SSE wire-format parser: the same events whatever the chunk boundaries, line breaks of
 * every kind, multi-line data, comments, sticky ids, `retry:`, and incomplete events.
 */
import { describe, expect, it } from 'vitest'
import { SseParser, type SseMessage } from '../../src/client/index.js'

const WIRE = 'retry: 1000\n\n' +
  ': ping\n\n' +
  'event: entry\nid: 1\ndata: {"a":1}\n\n' +
  'event: entry\r\nid: 2\r\ndata: line one\r\ndata: line two\r\n\r\n' +
  'event: leaf\rdata: {"leafId":null}\r\r' +
  'data:no space\ndata:  two spaces\n\n' +
  'event: entry\nid: 3\ndata: é😀\n\n'

const EXPECTED: SseMessage[] = [
  { event: 'entry', id: '1', data: '{"a":1}' },
  { event: 'entry', id: '2', data: 'line one\nline two' },
  { event: 'leaf', id: '2', data: '{"leafId":null}' },
  { event: 'message', id: '2', data: 'no space\n two spaces' },
  { event: 'entry', id: '3', data: 'é😀' },
]

function parseChunks (chunks: Array<string | Uint8Array>): { events: SseMessage[], parser: SseParser } {
  const parser = new SseParser()
  const events = chunks.flatMap((chunk) => parser.push(chunk))
  return { events, parser }
}

describe('SseParser', () => {
  it('parses a whole stream: events, ids, multi-line data, comments and retry', () => {
    const { events, parser } = parseChunks([WIRE])
    expect(events).toEqual(EXPECTED)
    expect(parser.retry).toBe(1000)
    expect(parser.lastEventId).toBe('3')
  })

  it('gives the same events for a split at every position of the text', () => {
    for (let i = 0; i <= WIRE.length; i++) {
      expect(parseChunks([WIRE.slice(0, i), WIRE.slice(i)]).events, `split at ${i}`).toEqual(EXPECTED)
    }
  })

  it('gives the same events for a split at every byte, even inside a UTF-8 character', () => {
    const bytes = new TextEncoder().encode(WIRE)
    for (let i = 0; i <= bytes.length; i++) {
      expect(parseChunks([bytes.subarray(0, i), bytes.subarray(i)]).events, `split at byte ${i}`).toEqual(EXPECTED)
    }
  })

  it('gives the same events fed one byte at a time', () => {
    const bytes = new TextEncoder().encode(WIRE)
    expect(parseChunks([...bytes].map((b) => Uint8Array.of(b))).events).toEqual(EXPECTED)
  })

  it('treats CR then LF in the next chunk as one line break', () => {
    const { events } = parseChunks(['data: a\r', '\n', '\r', '\ndata: b\n\n'])
    expect(events).toEqual([{ event: 'message', id: undefined, data: 'a' }, { event: 'message', id: undefined, data: 'b' }])
  })

  it('does not dispatch an event without data, and resets the event type after it', () => {
    const { events } = parseChunks(['event: leaf\n\n', 'data: x\n\n'])
    expect(events).toEqual([{ event: 'message', id: undefined, data: 'x' }])
  })

  it('keeps an event that has not ended yet until its blank line, and drops it at the end of the stream', () => {
    const parser = new SseParser()
    expect(parser.push('event: entry\nid: 7\ndata: {"x":1}\n')).toEqual([])
    parser.end()
    expect(parser.push('data: after\n\n')).toEqual([{ event: 'message', id: '7', data: 'after' }])
  })

  it('ignores unknown fields, an invalid retry and an id containing NUL', () => {
    const { events, parser } = parseChunks(['retry: 20\n\nfoo: bar\nretry: 1s\nid: a\0b\ndata: x\n\n'])
    expect(events).toEqual([{ event: 'message', id: undefined, data: 'x' }])
    expect(parser.retry).toBe(20)
  })

  it('drops a leading byte order mark', () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('data: x\n\n')])
    expect(parseChunks([bytes.subarray(0, 2), bytes.subarray(2)]).events).toEqual([{ event: 'message', id: undefined, data: 'x' }])
    expect(parseChunks(['\uFEFFdata: y\n\n']).events).toEqual([{ event: 'message', id: undefined, data: 'y' }])
  })

  it('reads a field without a colon as a field with an empty value', () => {
    const { events } = parseChunks(['data\ndata\n\n'])
    expect(events).toEqual([{ event: 'message', id: undefined, data: '\n' }])
  })
})
