/** The append path's shortcuts give the results of the long ways: etags, blob detection, ids, LRU order, the mutex. */
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { holdsImageBlock } from '../../src/registry/append-blobs.js'
import { computeEtag, SessionEtags } from '../../src/registry/etag.js'
import { Mutex } from '../../src/registry/mutex.js'
import { OpenSessions } from '../../src/registry/open-sessions.js'
import { OpenSession } from '../../src/registry/open-session.js'
import { SessionModel } from '../../src/session/session-model.js'
import type { Journal } from '../../src/storage/store.js'
import { createEntryId, pooledRandomBytes } from '../../src/session/ids.js'
import { silentLogger } from '../../src/session/logger.js'

describe('computeEtag', () => {
  const header = { type: 'session' as const, id: 's1', timestamp: 't', cwd: '/€' }
  const state = (stamp: string, h: object = header): string =>
    createHash('sha256').update(`s1\0${JSON.stringify(h)}\0${stamp}`).digest('base64url').slice(0, 22)

  it('is the digest of id, header and stamp, then the entry count in base 36 and the leaf', () => {
    expect(computeEtag({ id: 's1', entryCount: 12345, leafId: 'a1b2c3d4', header, stamp: 'b:3' })).toBe(`"${state('b:3')}.9ix.a1b2c3d4"`)
    expect(computeEtag({ id: 's1', entryCount: 0, leafId: null, header, stamp: '' })).toBe(`"${state('')}.0."`)
  })

  it('digests a leaf id that is not plain, so that no two leaves share an etag', () => {
    const odd = computeEtag({ id: 's1', entryCount: 2, leafId: 'a"b c', header, stamp: '' })
    const leafDigest = createHash('sha256').update('a"b c').digest('base64url').slice(0, 22)
    expect(odd).toBe(`"${state('')}.2.~${leafDigest}"`)
    expect(odd).toMatch(/^"[\x21\x23-\x7e]+"$/) // RFC 9110 etagc
    expect(computeEtag({ id: 's1', entryCount: 2, leafId: `~${leafDigest}`, header, stamp: '' })).not.toBe(odd)
  })

  it('is, for one session, computed again whenever its header or stamp changed, in place or not', () => {
    const etags = new SessionEtags()
    const live = { ...header }
    const input = { id: 's1', entryCount: 3, leafId: 'a1b2c3d4', header: live, stamp: '' }
    expect(etags.of(input)).toBe(computeEtag(input))
    live.cwd = '/moved' // a header changed in place, the stamp unchanged (a deferred session on a shared store)
    expect(etags.of(input)).toBe(`"${state('', live)}.3.a1b2c3d4"`)
    expect(etags.of({ ...input, stamp: 'b:1' })).toBe(`"${state('b:1', live)}.3.a1b2c3d4"`)
    expect(etags.of({ ...input, stamp: 'b:1', entryCount: 4 })).toBe(`"${state('b:1', live)}.4.a1b2c3d4"`)
  })
})

describe('holdsImageBlock', () => {
  it('finds a type:"image" object at any depth and nothing else', () => {
    expect(holdsImageBlock({ type: 'message', message: { role: 'user', content: 'hi' } })).toBe(false)
    expect(holdsImageBlock({ type: 'custom', data: [[{ deep: { type: 'image' } }]] })).toBe(true)
    expect(holdsImageBlock({ type: 'message', message: { content: [{ type: 'text', text: 'image' }] } })).toBe(false)
    let deep: Record<string, unknown> = { type: 'image' }
    for (let i = 0; i < 50_000; i++) deep = { next: deep }
    expect(holdsImageBlock(deep)).toBe(true) // iterative: no stack overflow
  })
})

describe('pooledRandomBytes', () => {
  it('hands out fresh bytes of the asked length, never the same pool bytes twice', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 5000; i++) seen.add(pooledRandomBytes(8).toString('hex'))
    expect(seen.size).toBe(5000)
    expect(pooledRandomBytes(10_000)).toHaveLength(10_000)
    expect(createEntryId(() => false)).toMatch(/^[0-9a-f]{8}$/)
  })
})

describe('OpenSessions', () => {
  const journal = { saved: true, close: async () => {} } as unknown as Journal
  const session = (id: string): OpenSession => new OpenSession(id, new SessionModel([{ type: 'session', id }]), journal, 0, 0)

  it('evicts the least recently used session, also after repeated use of the newest', async () => {
    const open = new OpenSessions({ max: 2, log: silentLogger, pinned: () => false })
    for (const id of ['a', 'b']) open.release(await open.acquire(id, async () => session(id)))
    open.release(open.acquireLoaded('a')!) // a is now the most recent
    open.release(open.acquireLoaded('a')!)
    open.release(await open.acquire('c', async () => session('c')))
    expect(open.peek('b')).toBeUndefined()
    expect(open.peek('a')?.id).toBe('a')
    open.release(open.acquireLoaded('c')!)
    open.release(await open.acquire('d', async () => session('d')))
    expect(open.peek('a')).toBeUndefined()
    expect([...open.values()].map((s) => s.id)).toEqual(['c', 'd'])
  })
})

describe('Mutex', () => {
  it('keeps FIFO order when the first holder takes the free lock without waiting', async () => {
    const mutex = new Mutex()
    const order: string[] = []
    const slow = mutex.run(async () => { await new Promise((resolve) => setTimeout(resolve, 5)); order.push('1') })
    const two = mutex.run(() => { order.push('2') })
    const three = mutex.run(async () => { order.push('3') })
    await Promise.all([slow, two, three])
    expect(order).toEqual(['1', '2', '3'])
    expect(mutex.busy).toBe(false)
    await mutex.run(() => { order.push('4') })
    expect(order).toEqual(['1', '2', '3', '4'])
  })

  it('runSync runs at once on a free lock, and queues behind a holder or waiters', async () => {
    const mutex = new Mutex()
    expect(mutex.runSync(() => 'now')).toBe('now')
    const order: string[] = []
    const held = mutex.run(async () => { await new Promise((resolve) => setTimeout(resolve, 5)); order.push('holder') })
    const queued = mutex.runSync(() => { order.push('sync'); return 'later' })
    expect(queued).toBeInstanceOf(Promise)
    expect(order).toEqual([])
    expect(await queued).toBe('later')
    await held
    expect(order).toEqual(['holder', 'sync'])
    expect(() => mutex.runSync(() => { throw new Error('boom') })).toThrow('boom')
    expect(mutex.busy).toBe(false)
  })
})
