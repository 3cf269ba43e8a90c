/**
 * What a listing keeps of a closed session is its listing item, whose texts are cut copies: a
 * cached item of a file with a huge first message and title holds a few KiB, not the message.
 * Measured on the heap after a full collection (the strings would be kept alive by reference,
 * which nothing but the heap shows).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { LISTING_TEXT_MAX, listingItemOf } from '../../src/session/listing-item.js'
import type { FileRecord } from '../../src/session/types.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const ITEMS = 40
const TEXT = 1024 * 1024

/** The records of a session file whose title and first message are `TEXT` characters each. */
function records (i: number): FileRecord[] {
  const big = (c: string): string => `${c}${i}`.repeat(TEXT / 4).slice(0, TEXT) // a fresh string per session
  return [
    { type: 'session', version: 3, id: `s${i}`, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/w', title: big('t') },
    { type: 'message', id: 'a1', parentId: null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: big('u') } },
  ]
}

describe('the listing cache', () => {
  it(`keeps ${ITEMS} items of sessions with 1 Mi-character texts in far less than one of the texts`, () => {
    gc()
    const before = process.memoryUsage().heapUsed
    const kept = Array.from({ length: ITEMS }, (_, i) => listingItemOf(records(i), '/data', 0))
    gc()
    const held = process.memoryUsage().heapUsed - before
    for (const item of kept) {
      expect(item?.firstMessage.length).toBe(LISTING_TEXT_MAX)
      expect(item?.title?.length).toBe(LISTING_TEXT_MAX)
    }
    // Each session's two texts take 2 MiB; their cut copies about 4 KiB.
    expect(held).toBeLessThan(TEXT)
  })
})
