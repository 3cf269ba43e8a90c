import { describe, expect, it } from 'vitest'
import { blobRefFor, isBlobHash, parseBlobRef, sha256Hex } from '../../src/blobs/hash.js'
import { ABC_HASH, EMPTY_HASH, INVALID_HASHES } from './contract.js'

describe('blob hashes and refs', () => {
  it('sha256Hex matches the FIPS 180-2 vectors', () => {
    expect(sha256Hex(Buffer.from('abc'))).toBe(ABC_HASH)
    expect(sha256Hex(new Uint8Array(0))).toBe(EMPTY_HASH)
  })

  it('isBlobHash accepts exactly 64 lowercase hex characters', () => {
    expect(isBlobHash(ABC_HASH)).toBe(true)
    for (const bad of INVALID_HASHES) expect(isBlobHash(bad)).toBe(false)
    expect(isBlobHash(undefined)).toBe(false)
    expect(isBlobHash(42)).toBe(false)
  })

  it('blobRefFor prefixes blob:sha256: and refuses an invalid hash', () => {
    expect(blobRefFor(ABC_HASH)).toBe(`blob:sha256:${ABC_HASH}`)
    expect(() => blobRefFor('../x')).toThrow(expect.objectContaining({ code: 'SS_INVALID_ARGUMENT' }))
  })

  it('parseBlobRef returns the hash of a valid ref only', () => {
    expect(parseBlobRef(`blob:sha256:${ABC_HASH}`)).toBe(ABC_HASH)
    expect(parseBlobRef('blob:sha256:../../etc/passwd')).toBeUndefined()
    expect(parseBlobRef(`blob:sha256:${ABC_HASH.toUpperCase()}`)).toBeUndefined()
    expect(parseBlobRef(`blob:sha256:${ABC_HASH}0`)).toBeUndefined()
    expect(parseBlobRef(` blob:sha256:${ABC_HASH}`)).toBeUndefined()
    expect(parseBlobRef(ABC_HASH)).toBeUndefined()
    expect(parseBlobRef(null)).toBeUndefined()
  })
})
