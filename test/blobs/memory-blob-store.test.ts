import { describe, expect, it } from 'vitest'
import { MemoryBlobStore } from '../../src/blobs/index.js'
import { ABC_HASH, blobContract } from './contract.js'

blobContract('MemoryBlobStore', async () => {
  const store = new MemoryBlobStore()
  return { store, count: async () => store.size, cleanup: async () => {} }
})

describe('MemoryBlobStore (memory only)', () => {
  it('get returns a copy: mutating it does not change the stored blob', async () => {
    const store = new MemoryBlobStore()
    await store.put(Buffer.from('abc'))
    const first = await store.get(ABC_HASH)
    first?.fill(0)
    expect((await store.get(ABC_HASH))?.toString()).toBe('abc')
  })

  it('instances share nothing', async () => {
    const a = new MemoryBlobStore()
    await a.put(Buffer.from('abc'))
    expect(await new MemoryBlobStore().has(ABC_HASH)).toBe(false)
  })
})
