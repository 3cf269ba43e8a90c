/** The one SSE encoder (STYLE.md §12). */
import { describe, expect, it } from 'vitest'
import { encodeComment, encodeRetry, encodeSse } from '../src/http/sse.js'
import { resumeAfter } from '../src/http/event-streams.js'

describe('encodeSse', () => {
  it('writes event, id and one data line per line of data, keeping the space after data:', () => {
    expect(encodeSse('entry', '7', '{"a":1}')).toBe('event: entry\nid: 7\ndata: {"a":1}\n\n')
    expect(encodeSse('x', '1', 'a\r\nb\rc\nd')).toBe('event: x\nid: 1\ndata: a\ndata: b\ndata: c\ndata: d\n\n')
    expect(encodeSse('x', '1', ' lead')).toBe('event: x\nid: 1\ndata:  lead\n\n')
  })

  it('omits the id line when there is no id', () => {
    expect(encodeSse('leaf', undefined, '{}')).toBe('event: leaf\ndata: {}\n\n')
  })

  it('refuses CR or LF in event and id', () => {
    expect(() => encodeSse('a\nb', '1', '')).toThrow(TypeError)
    expect(() => encodeSse('a', '1\r', '')).toThrow(TypeError)
    expect(() => encodeComment('a\nb')).toThrow(TypeError)
  })

  it('encodes comments and retry', () => {
    expect(encodeComment('ping')).toBe(': ping\n\n')
    expect(encodeRetry(1000)).toBe('retry: 1000\n\n')
  })
})

describe('resumeAfter', () => {
  it('prefers Last-Event-ID over ?after=, else starts at 0', () => {
    expect(resumeAfter('5', 2)).toBe(5)
    expect(resumeAfter(undefined, 2)).toBe(2)
    expect(resumeAfter(undefined, undefined)).toBe(0)
    expect(resumeAfter(' ', 3)).toBe(3)
    expect(() => resumeAfter('-1', undefined)).toThrow(/Last-Event-ID/)
    expect(() => resumeAfter('1.5', undefined)).toThrow(/Last-Event-ID/)
  })
})
