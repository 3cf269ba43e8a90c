/** The registry's small parts: cursor, etag matching, the `?blobs=ref` view, LRU, mutex, batch parsing. */
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { withBlobRefs } from '../../src/registry/blob-refs.js'
import { decodeCursor, encodeCursor } from '../../src/registry/cursor.js'
import { ifMatchSatisfied } from '../../src/registry/etag.js'
import { Lru } from '../../src/registry/lru.js'
import { Mutex } from '../../src/registry/mutex.js'
import { parseAppendBody, validateAppend } from '../../src/registry/new-entries.js'

describe('cursor', () => {
  it('round-trips a sort key and rejects anything else with SS_INVALID_CURSOR', () => {
    const key = { modifiedMs: 1712345678901.25, id: 'abc' }
    expect(decodeCursor(encodeCursor(key))).toEqual(key)
    for (const bad of ['', 'x', '!!', Buffer.from('[2,1,"a"]').toString('base64url'), Buffer.from('{}').toString('base64url')]) {
      expect(() => decodeCursor(bad)).toThrow(expect.objectContaining({ code: 'SS_INVALID_CURSOR', statusCode: 400 }))
    }
  })
})

describe('ifMatchSatisfied', () => {
  it('matches absent, *, the tag, an unquoted tag or a list; never a weak tag', () => {
    expect(ifMatchSatisfied(undefined, '"t"')).toBe(true)
    expect(ifMatchSatisfied('*', '"t"')).toBe(true)
    expect(ifMatchSatisfied('"t"', '"t"')).toBe(true)
    expect(ifMatchSatisfied('t', '"t"')).toBe(true)
    expect(ifMatchSatisfied('"a", "t"', '"t"')).toBe(true)
    expect(ifMatchSatisfied('W/"t"', '"t"')).toBe(false)
    expect(ifMatchSatisfied('"u"', '"t"')).toBe(false)
  })
})

describe('withBlobRefs', () => {
  const bytes = Buffer.alloc(2000, 1)
  const data = bytes.toString('base64')
  const ref = `blob:sha256:${createHash('sha256').update(bytes).digest('hex')}`

  it('replaces qualifying image data in content arrays at any depth, without mutating the input', () => {
    const entry = {
      type: 'message',
      message: { role: 'user', content: [{ type: 'image', data }, { type: 'image', data: 'c2hvcnQ=' }] },
      details: { x: { content: [[{ type: 'image', data }]] } },
      other: { type: 'image', data },
    }
    const copy = structuredClone(entry)
    const out = withBlobRefs(entry)
    expect(entry).toEqual(copy)
    expect(out.message.content[0]?.data).toBe(ref)
    expect(out.message.content[1]?.data).toBe('c2hvcnQ=')
    expect(out.details.x.content[0]?.[0]?.data).toBe(ref)
    expect(out.other.data).toBe(data) // not in a content array
    expect(out.message.content[1]).toBe(entry.message.content[1])
  })

  it('returns the same object when nothing qualifies', () => {
    const entry = { type: 'message', message: { role: 'user', content: 'text' } }
    expect(withBlobRefs(entry)).toBe(entry)
  })
})

describe('Lru', () => {
  it('forgets the least recently used key first', () => {
    const lru = new Lru<string, number>(2)
    lru.set('a', 1)
    lru.set('b', 2)
    lru.get('a')
    lru.set('c', 3)
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual([1, undefined, 3])
  })
})

describe('Mutex', () => {
  it('runs holders one at a time in arrival order', async () => {
    const mutex = new Mutex()
    const log: string[] = []
    const hold = async (name: string, ms: number): Promise<void> => {
      await mutex.run(async () => {
        log.push(`${name}+`)
        await new Promise((resolve) => setTimeout(resolve, ms))
        log.push(`${name}-`)
      })
    }
    await Promise.all([hold('a', 20), hold('b', 1), hold('c', 5)])
    expect(log).toEqual(['a+', 'a-', 'b+', 'b-', 'c+', 'c-'])
    expect(mutex.busy).toBe(false)
  })
})

describe('append bodies', () => {
  it('reads both forms, with parentId on the batch or on the single entry', () => {
    expect(parseAppendBody({ type: 'custom', customType: 'x', parentId: null })).toEqual({ entries: [{ type: 'custom', customType: 'x' }], parentId: null })
    expect(parseAppendBody({ entries: [{ type: 'custom', customType: 'x' }] })).toEqual({ entries: [{ type: 'custom', customType: 'x' }] })
    expect(() => parseAppendBody({ entries: {} })).toThrow(/entries must be an array/)
    expect(() => parseAppendBody({ entries: [], parentId: 5 })).toThrow(/parentId/)
  })

  it('validates the whole batch before anything happens', () => {
    const known = (id: string): boolean => id === 'e1'
    expect(() => { validateAppend({ entries: [{ type: 'label', targetId: 'e1' }] }, known) }).not.toThrow()
    expect(() => { validateAppend({ entries: [{ type: 'label', targetId: 'zz' }] }, known) }).toThrow(expect.objectContaining({ statusCode: 422 }))
    expect(() => { validateAppend({ entries: [{ type: 'custom', customType: 'x' }], parentId: 'zz' }, known) }).toThrow(expect.objectContaining({ statusCode: 422 }))
    expect(() => { validateAppend({ entries: [{ type: 'custom', customType: 'x', timestamp: 'now' }] }, known) }).toThrow(expect.objectContaining({ statusCode: 400 }))
    expect(() => { validateAppend({ entries: [{ type: 'session_init', systemPrompt: 's', task: 't', tools: [1] }] }, known) }).toThrow(/tools/)
  })
})
