/**
 * §12.5 through the session model: ids of appended entries (SPEC.md §3.2), drawn by the manager
 * from the same random pool it uses in production; the collision case steers that pool.
 */
import crypto from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { pooledRandomBytes } from '../../src/session/ids.js'
import { useManagerEnv } from '../helpers/manager-env.js'
import { assistant, user } from '../helpers/session-env.js'

const { env, create } = useManagerEnv()
afterEach(() => { vi.restoreAllMocks() })

const POOL_BYTES = 4096

describe('entry ids of a SessionManager (SPEC.md §3.2)', () => {
  it('§12.5 1,000 appends produce distinct ids matching ^[0-9a-f]{8}$, in memory and on disk', async () => {
    const m = await create()
    const ids = Array.from({ length: 1000 }, (_, i) => m.appendMessage(i % 2 === 0 ? user(`u${i}`) : assistant(`a${i}`)))
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}$/)
    expect(new Set(ids).size).toBe(1000)
    expect(m.getEntries().map((e) => e.id)).toEqual(ids)
    await m.flush()
    expect(env.readJsonl(m.getSessionFile()!).slice(1).map((r) => r.id)).toEqual(ids)
  })

  it('§12.5 with a random source repeating an existing id 100 times, the next append gets a unique 16-hex id', async () => {
    const m = await create()
    const existing = m.appendMessage(assistant('first'))
    const real = crypto.randomFillSync.bind(crypto) as (buffer: Buffer) => Buffer
    let refills = 0
    const fill = vi.spyOn(crypto, 'randomFillSync')
    fill.mockImplementation(((buffer: Buffer) => { refills++; return real(buffer) }) as unknown as typeof crypto.randomFillSync)
    // Use up the pool to its end, so that the next id is the first draw of a fresh pool.
    for (let drawn = 0; drawn <= POOL_BYTES; drawn += 4) {
      pooledRandomBytes(4)
      if (refills > 0) break
    }
    for (let i = 4; i < POOL_BYTES; i += 4) pooledRandomBytes(4)
    expect(refills).toBe(1)
    // The fresh pool: the existing id 100 times over, then real random bytes.
    fill.mockImplementation(((buffer: Buffer) => {
      refills++
      real(buffer)
      for (let i = 0; i < 100; i++) buffer.write(existing, i * 4, 'hex')
      return buffer
    }) as unknown as typeof crypto.randomFillSync)
    const next = m.appendMessage(user('second'))
    expect(refills).toBe(2)
    expect(next).toMatch(/^[0-9a-f]{16}$/)
    expect(m.getEntries().map((e) => e.id)).toEqual([existing, next])
    await m.flush()
    expect(env.readJsonl(m.getSessionFile()!).slice(1).map((r) => r.id)).toEqual([existing, next])
  })
})
