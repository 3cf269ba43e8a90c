/**
 * `KeyClaim` with a store that keeps answers with their lines: the answer handed to the write
 * replaces an earlier one of the same attempt, and once a write committed it, `keep` makes no
 * statement of its own; otherwise `keep` keeps it as before.
 */
import { describe, expect, it } from 'vitest'
import type { OpenSession } from '../../src/registry/open-session.js'
import type { RegistryCore } from '../../src/registry/registry-core.js'
import { KeyClaim } from '../../src/registry/shared-replays.js'
import type { Appended } from '../../src/registry/types.js'
import type { KeptWithLines, ReplayStore, StoredReplay } from '../../src/storage/types.js'

class FakeReplays implements ReplayStore {
  readonly renewMs = 60_000
  readonly handed: Array<{ ids: readonly string[], dropped: boolean, committed: boolean }> = []
  readonly kept: StoredReplay[] = []

  async claim (): Promise<{ held: true }> { return { held: true } }
  async keep (_path: string, _session: string, _key: string, _owner: string, replay: StoredReplay): Promise<boolean> {
    this.kept.push(replay)
    return true
  }

  async renew (): Promise<void> {}
  async release (): Promise<void> {}
  keepWithLines (_path: string, _session: string, _key: string, _owner: string, _replay: StoredReplay, ids: readonly string[]): KeptWithLines {
    const handed = { ids, dropped: false, committed: false }
    this.handed.push(handed)
    return { get committed () { return handed.committed }, drop: () => { handed.dropped = true } }
  }
}

function setUp (): { claim: KeyClaim, store: FakeReplays, slot: OpenSession } {
  const store = new FakeReplays()
  const core = { storage: { replays: store }, log: { warn: () => {} } } as unknown as RegistryCore
  const slot = { id: 's1', idempotency: new Map(), manager: { getSessionFile: () => '/data/s1.jsonl' } } as unknown as OpenSession
  return { claim: new KeyClaim(core, 'k1', 'hash'), store, slot }
}

const answer = (lastSeq: number): Appended => ({ result: { entries: [], leafId: null, firstSeq: 1, lastSeq, persisted: true }, etag: `"e${lastSeq}"` })

describe('KeyClaim with answers kept with their lines', () => {
  it('an answer handed again replaces the first, which is dropped', async () => {
    const { claim, store, slot } = setUp()
    expect(await claim.take(slot)).toBeUndefined()
    claim.withLines(answer(1), ['a'])
    claim.withLines(answer(2), ['b'])
    expect(store.handed.map((h) => [h.ids, h.dropped])).toEqual([[['a'], true], [['b'], false]])
    await claim.release()
    expect(store.handed[1]?.dropped).toBe(true)
  })

  it('keep makes no statement once the write committed the answer, and keeps it itself otherwise', async () => {
    const first = setUp()
    await first.claim.take(first.slot)
    first.claim.withLines(answer(3), ['c'])
    ;(first.store.handed[0] as { committed: boolean }).committed = true
    await first.claim.keep(answer(3))
    expect(first.store.kept).toEqual([])

    const second = setUp()
    await second.claim.take(second.slot)
    second.claim.withLines(answer(4), ['d'])
    await second.claim.keep(answer(4))
    expect(second.store.kept).toEqual([{ bodyHash: 'hash', response: answer(4) }])
    expect(second.store.handed[0]?.dropped).toBe(true)
  })
})
