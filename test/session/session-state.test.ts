/**
 * SessionState walks a regular session (unique ids, every parent before its child) by parent
 * positions, and any other session through its id index. Both must give what the generic
 * functions of tree.ts and context.ts give over the same entries.
 */
import { describe, expect, it } from 'vitest'
import { buildSessionContext } from '../../src/session/context.js'
import { SessionState } from '../../src/session/session-state.js'
import { buildTree, flatTree, pathFrom } from '../../src/session/tree.js'
import type { FileRecord, SessionEntryBase } from '../../src/session/types.js'
import { assistant, compaction, entry, user } from './helpers.js'

const header: FileRecord = { type: 'session', version: 3, id: 's', timestamp: '2026-03-14T15:00:00.000Z', cwd: '/w' }
const ids = (list: readonly SessionEntryBase[]): string[] => list.map((e) => e.id)

/** A small deterministic generator (mulberry32). */
function random (seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Shape = 'chain' | 'branches' | 'odd'

/** `n` entries: a chain, a tree with branches, or (odd) forward parents, duplicates, self parents and cycles too. */
function session (seed: number, n: number, shape: Shape): SessionEntryBase[] {
  const next = random(seed)
  const list: SessionEntryBase[] = []
  for (let i = 0; i < n; i++) {
    const id = shape === 'odd' && next() < 0.1 && i > 0 ? `e${Math.floor(next() * i)}` : `e${i}`
    let parent: string | null = i === 0 ? null : `e${i - 1}`
    if (shape !== 'chain' && i > 0 && next() < 0.3) parent = next() < 0.1 ? null : `e${Math.floor(next() * i)}`
    if (shape === 'odd' && next() < 0.15) parent = next() < 0.5 ? id : `e${Math.floor(next() * n * 1.2)}`
    const kind = next()
    if (kind < 0.1) list.push(compaction(id, parent, `e${Math.floor(next() * n)}`))
    else if (kind < 0.15) list.push(entry('label', id, parent, { targetId: `e${Math.floor(next() * n)}`, label: `l${i}` }))
    else if (kind < 0.55) list.push(assistant(id, parent, 'p', `m${i % 3}`))
    else list.push(user(id, parent))
  }
  return list
}

function expectSameWalks (state: SessionState): void {
  const { entries, byId, labels } = state
  for (const e of entries) {
    expect(ids(state.pathTo(e))).toEqual(ids(pathFrom(byId, e)))
    expect(buildSessionContext(entries, e.id, byId, (leaf) => state.pathTo(leaf))).toEqual(buildSessionContext(entries, e.id, byId))
  }
  const parents = state.parentPositions()
  expect(buildTree(entries, byId, labels, parents)).toEqual(buildTree(entries, byId, labels))
  expect(flatTree(entries, byId, labels, parents)).toEqual(flatTree(entries, byId, labels))
}

describe('SessionState walks', () => {
  it('a session built by appends keeps parent positions, and its walks equal the walks through the index', () => {
    for (const shape of ['chain', 'branches'] as const) {
      for (let seed = 1; seed <= 20; seed++) {
        const state = new SessionState([header])
        for (const e of session(seed, 60, shape)) state.add(e)
        expect(state.parentPositions()).toHaveLength(60)
        expectSameWalks(state)
      }
    }
  })

  it('a loaded file with forward parents, duplicate ids, self parents or cycles is walked through the index, with the same results', () => {
    let irregular = 0
    for (let seed = 1; seed <= 40; seed++) {
      const state = new SessionState([header, ...session(seed, 60, 'odd')])
      if (state.parentPositions() === undefined) irregular++
      expectSameWalks(state)
    }
    expect(irregular).toBeGreaterThan(30)
  })

  it('a parent position is the parent the index names: the later of two entries is not mistaken for an earlier one', () => {
    const state = new SessionState([header, user('a', null), user('b', 'a'), user('c', 'a'), user('d', 'b')])
    expect(state.parentPositions()).toEqual([-1, 0, 0, 1])
    expect(ids(state.pathTo(state.byId.get('d')!))).toEqual(['a', 'b', 'd'])
    expect(ids(state.pathTo(state.byId.get('c')!))).toEqual(['a', 'c'])
    state.add(user('e', 'c'))
    expect(ids(state.pathTo(state.byId.get('e')!))).toEqual(['a', 'c', 'e'])
  })

  it('a self parent or a duplicate id ends the regular shape; replace starts it again', () => {
    const state = new SessionState([header, user('a', null), user('b', 'b')])
    expect(state.parentPositions()).toBeUndefined()
    expect(ids(state.pathTo(state.byId.get('b')!))).toEqual(['b'])
    state.replace([header, user('a', null), user('a', 'a')])
    expect(state.parentPositions()).toBeUndefined()
    state.replace([header, user('a', null), user('b', 'a')])
    expect(state.parentPositions()).toEqual([-1, 0])
  })

  it('an entry that is not in the session is walked through the index', () => {
    const state = new SessionState([header, user('a', null), user('b', 'a')])
    const stranger = user('x', 'b')
    expect(ids(state.pathTo(stranger))).toEqual(['a', 'b', 'x'])
  })
})
