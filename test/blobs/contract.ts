/**
 * The contract every `BlobStore` must pass (SPEC.md §9.4). Store files call `blobContract` and
 * add their own cases after it.
 */
import fs from 'node:fs'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { BlobStore } from '../../src/blobs/types.js'

export interface BlobFixture {
  store: BlobStore
  /** How many entries the store holds (for the disk store: every entry of its directory). */
  count(): Promise<number>
  cleanup(): Promise<void>
}

/** SHA-256 test vectors (FIPS 180-2). */
export const ABC_HASH = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
export const EMPTY_HASH = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

export const INVALID_HASHES = [
  '../../etc/passwd',
  ABC_HASH.toUpperCase(),
  ABC_HASH.slice(0, 63),
  ABC_HASH + '0',
  'g'.repeat(64),
  '',
  ABC_HASH + '\n',
  `../${ABC_HASH.slice(3)}`,
  `blob:sha256:${ABC_HASH}`,
]

/** Spies on the `fs` entry points a store could use to look a blob up. */
function spyOnFileAccess (): Array<{ mock: { calls: unknown[][] } }> {
  const p = fs.promises
  return [
    vi.spyOn(p, 'readFile'), vi.spyOn(p, 'stat'), vi.spyOn(p, 'lstat'), vi.spyOn(p, 'access'),
    vi.spyOn(p, 'open'), vi.spyOn(fs, 'open'), vi.spyOn(fs, 'stat'), vi.spyOn(fs, 'readFile'),
    vi.spyOn(fs, 'existsSync'), vi.spyOn(fs, 'statSync'), vi.spyOn(fs, 'readFileSync'),
  ]
}

export function blobContract (name: string, make: () => Promise<BlobFixture>): void {
  describe(`${name} blob contract`, () => {
    let fx: BlobFixture
    let store: BlobStore
    beforeEach(async () => {
      fx = await make()
      store = fx.store
    })
    afterEach(async () => {
      vi.restoreAllMocks()
      await fx.cleanup()
    })

    it('put, get and has round-trip the bytes under their SHA-256', async () => {
      const result = await store.put(Buffer.from('abc'))
      expect(result).toEqual({ hash: ABC_HASH, ref: `blob:sha256:${ABC_HASH}`, created: true })
      expect(await store.has(ABC_HASH)).toBe(true)
      const bytes = await store.get(ABC_HASH)
      expect(Buffer.isBuffer(bytes)).toBe(true)
      expect(bytes?.toString('utf8')).toBe('abc')
    })

    it('round-trips empty and binary content byte for byte', async () => {
      const empty = await store.put(new Uint8Array(0))
      expect(empty.hash).toBe(EMPTY_HASH)
      expect((await store.get(EMPTY_HASH))?.length).toBe(0)
      const binary = Uint8Array.from({ length: 256 }, (_, i) => 255 - i)
      const { hash } = await store.put(binary)
      expect(new Uint8Array((await store.get(hash)) ?? [])).toEqual(binary)
    })

    it('get is null and has is false for a valid hash that is absent', async () => {
      expect(await store.get(ABC_HASH)).toBeNull()
      expect(await store.has(ABC_HASH)).toBe(false)
    })

    it('a second put of the same bytes reports created: false and stores one copy', async () => {
      const first = await store.put(Buffer.from('same'))
      const second = await store.put(Buffer.from('same'))
      expect(first.created).toBe(true)
      expect(second).toEqual({ ...first, created: false })
      expect(await fx.count()).toBe(1)
    })

    it('stored bytes do not change when the caller later mutates its buffer', async () => {
      const bytes = Buffer.from('mutable')
      const { hash } = await store.put(bytes)
      bytes.fill(0)
      expect((await store.get(hash))?.toString()).toBe('mutable')
    })

    it('concurrent puts of the same bytes are safe: one copy, one creator, same result', async () => {
      const bytes = Buffer.alloc(256 * 1024, 7)
      const results = await Promise.all(Array.from({ length: 10 }, async () => await store.put(bytes)))
      expect(new Set(results.map((r) => r.hash)).size).toBe(1)
      expect(results.filter((r) => r.created)).toHaveLength(1)
      expect(await fx.count()).toBe(1)
      expect((await store.get(results[0]?.hash ?? ''))?.equals(bytes)).toBe(true)
    })

    it('concurrent puts of different bytes store each once', async () => {
      await Promise.all(Array.from({ length: 20 }, async (_, i) => await store.put(Buffer.from(`blob ${i}`))))
      expect(await fx.count()).toBe(20)
    })

    it('open gives the size, the first bytes and a stream of the whole blob', async () => {
      const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 251))
      const { hash } = await store.put(bytes)
      const reader = await store.open?.(hash)
      expect(reader?.size).toBe(bytes.length)
      expect(reader?.head.equals(bytes.subarray(0, 16))).toBe(true)
      const chunks: Buffer[] = []
      for await (const chunk of reader?.stream() ?? []) chunks.push(chunk as Buffer)
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true)
    })

    it('open is null for an absent blob and streams an empty one as nothing', async () => {
      expect(await store.open?.(ABC_HASH)).toBeNull()
      await store.put(new Uint8Array(0))
      const reader = await store.open?.(EMPTY_HASH)
      expect(reader?.size).toBe(0)
      const chunks: Buffer[] = []
      for await (const chunk of reader?.stream() ?? []) chunks.push(chunk as Buffer)
      expect(Buffer.concat(chunks).length).toBe(0)
    })

    it('list yields every stored hash once', async () => {
      const hashes = await Promise.all(Array.from({ length: 5 }, async (_, i) => (await store.put(Buffer.from(`listed ${i}`))).hash))
      await store.put(Buffer.from('listed 0'))
      const listed: string[] = []
      for await (const hash of store.list?.() ?? []) listed.push(hash)
      expect(listed.sort()).toEqual(hashes.sort())
    })

    it('scan yields every blob with its size and when it was put, and usage counts them', async () => {
      const before = Date.now() - 5
      await store.put(Buffer.from('one'))
      await store.put(Buffer.from('three'))
      await store.put(Buffer.from('one'))
      const scanned = []
      for await (const stat of store.scan()) scanned.push(stat)
      expect(scanned.map((s) => s.size).sort()).toEqual([3, 5])
      for (const stat of scanned) expect(stat.touchedMs).toBeGreaterThanOrEqual(before)
      expect(await store.usage()).toEqual({ blobs: 2, bytes: 8 })
    })

    it('remove takes blobs put before its bound and keeps those put again since', async () => {
      const old = await store.put(Buffer.from('old'))
      const again = await store.put(Buffer.from('put again'))
      await new Promise((resolve) => setTimeout(resolve, 20))
      const bound = Date.now()
      await new Promise((resolve) => setTimeout(resolve, 5))
      await store.put(Buffer.from('put again'))
      const young = await store.put(Buffer.from('young'))
      const removed = await store.remove([old.hash, again.hash, young.hash, ABC_HASH], bound)
      expect(removed.map((r) => [r.hash, r.size])).toEqual([[old.hash, 3]])
      expect(await store.has(old.hash)).toBe(false)
      expect(await store.has(again.hash)).toBe(true)
      expect(await store.has(young.hash)).toBe(true)
      expect(await store.usage()).toEqual({ blobs: 2, bytes: 14 })
      expect(await store.put(Buffer.from('old'))).toMatchObject({ hash: old.hash, created: true })
    })

    it('a put racing the removal of the same bytes leaves them stored', async () => {
      const bytes = Buffer.from('raced')
      for (let i = 0; i < 10; i++) {
        const { hash } = await store.put(bytes)
        await new Promise((resolve) => setTimeout(resolve, 3))
        const bound = Date.now()
        const [, put] = await Promise.all([store.remove([hash], bound), store.put(bytes)])
        expect(put.hash).toBe(hash)
        expect((await store.get(hash))?.equals(bytes)).toBe(true)
      }
    })

    it('get and has reject an invalid hash with INVALID_ARGUMENT without touching the file system', async () => {
      const spies = spyOnFileAccess()
      for (const bad of INVALID_HASHES) {
        await expect(store.get(bad)).rejects.toMatchObject({ code: 'SS_INVALID_ARGUMENT', statusCode: 400 })
        await expect(store.has(bad)).rejects.toMatchObject({ code: 'SS_INVALID_ARGUMENT' })
        await expect(store.open?.(bad)).rejects.toMatchObject({ code: 'SS_INVALID_ARGUMENT' })
      }
      expect(spies.flatMap((spy) => spy.mock.calls)).toEqual([])
    })
  })
}
