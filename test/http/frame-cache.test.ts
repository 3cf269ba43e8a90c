/** The shared SSE frame cache: one encoding per entry and seq, one Buffer for every subscriber, bounded in size. */
import { describe, expect, it } from 'vitest'
import { entryFrame } from '../../src/http/event-streams.js'
import { FrameCache, joinFrames } from '../../src/http/frame-cache.js'

describe('FrameCache', () => {
  it('encodes an entry once per seq into one Buffer, and re-encodes for another seq', () => {
    const cache = new FrameCache(1000, 10)
    const entry = {}
    let calls = 0
    const encode = (s: string) => () => { calls++; return s }
    const a = cache.get(entry, 1, encode('aé'))
    expect(a).toBeInstanceOf(Buffer)
    expect(a.toString('utf8')).toBe('aé')
    expect(cache.get(entry, 1, encode('never'))).toBe(a)
    expect(cache.get(entry, 2, encode('b')).toString()).toBe('b')
    expect(calls).toBe(2)
    expect(cache.size).toBe(1)
    expect(cache.bytes).toBe(1)
  })

  it('drops the oldest frames beyond its byte and frame bounds, and never keeps a frame over a quarter of it', () => {
    const cache = new FrameCache(100, 3)
    const entries = Array.from({ length: 5 }, () => ({}))
    entries.forEach((e, i) => cache.get(e, i, () => 'x'.repeat(10)))
    expect(cache.size).toBe(3)
    expect(cache.bytes).toBe(30)
    let reencoded = false
    cache.get(entries[0] as object, 0, () => { reencoded = true; return 'x'.repeat(10) })
    expect(reencoded).toBe(true) // the oldest went first
    cache.get({}, 9, () => 'y'.repeat(26))
    expect(cache.bytes).toBe(30)
    for (let i = 0; i < 20; i++) cache.get({}, i, () => 'z'.repeat(20))
    expect(cache.bytes).toBeLessThanOrEqual(100)
  })
})

describe('entryFrame', () => {
  it('is the one SSE encoding of the entry, one Buffer shared for the inline view, separate for ?blobs=ref', () => {
    const entry = { type: 'message', id: 'e1', message: { role: 'user', content: [{ type: 'image', data: 'A'.repeat(2048), mimeType: 'image/png' }] } }
    const inline = entryFrame(entry, 7, undefined)
    expect(inline.toString('utf8')).toBe(`event: entry\nid: 7\ndata: ${JSON.stringify(entry)}\n\n`)
    expect(entryFrame(entry, 7, undefined)).toBe(inline) // the same bytes, not a copy
    expect(entryFrame(entry, 7, 'inline')).toBe(inline)
    expect(entryFrame(entry, 7, 'ref').toString()).toMatch(/"data":"blob:sha256:[0-9a-f]{64}"/)
    expect(entryFrame(entry, 8, undefined).toString()).toMatch(/^event: entry\nid: 8\n/)
  })
})

describe('joinFrames', () => {
  const frames = [1, 2, 3].map((seq) => entryFrame({ type: 'custom', id: `j${seq}` }, seq, undefined))

  it('writes a lone frame as is', () => {
    expect(joinFrames([frames[0] as Buffer])).toBe(frames[0])
  })

  it('joins a run once: every subscriber reading the same run gets the same Buffer', () => {
    const one = joinFrames(frames)
    expect(one.toString()).toBe(frames.map((f) => f.toString()).join(''))
    expect(joinFrames([...frames])).toBe(one)
    const shorter = joinFrames(frames.slice(0, 2))
    expect(shorter).not.toBe(one)
    expect(shorter.toString()).toBe(frames.slice(0, 2).map((f) => f.toString()).join(''))
    expect(joinFrames(frames.slice(1)).toString()).toBe(frames.slice(1).map((f) => f.toString()).join(''))
  })
})
