import { describe, expect, it } from 'vitest'
import {
  buildIndex, buildLabelMap, buildTree, flatTree, getChildren, isEntry, normalizeParentId, walkToRoot,
} from '../../src/session/tree.js'
import type { SessionEntryBase, SessionTreeNode } from '../../src/session/types.js'
import { entry, user } from './helpers.js'

const at = (iso: string) => ({ timestamp: iso })
const ids = (list: readonly SessionEntryBase[]) => list.map((e) => e.id)
const shape = (nodes: readonly SessionTreeNode[]): unknown[] =>
  nodes.map((n) => n.children.length === 0 ? n.entry.id : [n.entry.id, shape(n.children)])

function label (id: string, targetId: string, text?: string): SessionEntryBase {
  return entry('label', id, null, text === undefined ? { targetId } : { targetId, label: text })
}

describe('isEntry and parent normalization', () => {
  it('§5.4 an entry has a string type other than "session" and a non-empty string id', () => {
    expect(isEntry({ type: 'message', id: 'a' })).toBe(true)
    expect(isEntry({ type: 'service_tier_change', id: '1' })).toBe(true)
    expect(isEntry({ type: 'message', id: '' })).toBe(false)
    expect(isEntry({ type: 'message', id: 5 })).toBe(false)
    expect(isEntry({ type: 'message' })).toBe(false)
    expect(isEntry({ id: 'a' })).toBe(false)
    expect(isEntry({ type: 'session', id: 'a' })).toBe(false)
  })

  it('§5.4 a parentId that is not a non-empty string is null', () => {
    expect(normalizeParentId({ parentId: 'p' })).toBe('p')
    for (const p of ['', 0, undefined, null, {}, ['p']]) expect(normalizeParentId({ parentId: p })).toBeNull()
  })
})

describe('index and walks', () => {
  it('§5.4 duplicate ids: the index maps the id to the later entry', () => {
    const first = user('dup', null, 'first')
    const second = user('dup', null, 'second')
    const byId = buildIndex([first, second])
    expect(byId.get('dup')).toBe(second)
    expect(byId.size).toBe(1)
  })

  it('§12.33 walkToRoot returns root→id and [] for an unknown id', () => {
    const list = [user('1', null), user('2', '1'), user('3', '2'), user('4', '2')]
    const byId = buildIndex(list)
    expect(ids(walkToRoot(byId, '3'))).toEqual(['1', '2', '3'])
    expect(ids(walkToRoot(byId, '4'))).toEqual(['1', '2', '4'])
    expect(walkToRoot(byId, 'nope')).toEqual([])
  })

  it('§6.1 walks stop at a missing parent and at the first repeated id', () => {
    const byId = buildIndex([user('9', 'gone'), user('a', 'b'), user('b', 'a'), user('s', 's')])
    expect(ids(walkToRoot(byId, '9'))).toEqual(['9'])
    expect(ids(walkToRoot(byId, 'a'))).toEqual(['b', 'a'])
    expect(ids(walkToRoot(byId, 's'))).toEqual(['s'])
  })

  it('§12.33 getChildren returns the direct children in file order', () => {
    const list = [user('1', null), user('2', '1'), user('3', '2'), user('4', '1'), user('5', '1'), user('6', '')]
    expect(ids(getChildren(list, '1'))).toEqual(['2', '4', '5'])
    expect(ids(getChildren(list, '3'))).toEqual([])
    expect(ids(getChildren(list, null))).toEqual(['1', '6'])
  })
})

describe('labels', () => {
  it('§12.35/§12.36 replays label entries: last wins, undefined or "" clears', () => {
    const labels = buildLabelMap([
      label('l1', 'a', 'one'), label('l2', 'a', 'two'), label('l3', 'b', 'x'), label('l4', 'b', ''),
      label('l5', 'c', 'y'), label('l6', 'c'),
    ])
    expect([...labels]).toEqual([['a', 'two']])
  })

  it('§6.3 map order: targets ordered by when each last went from unlabelled to labelled', () => {
    const labels = buildLabelMap([
      label('l1', 'a', 'A'), label('l2', 'b', 'B'), label('l3', 'c', 'C'),
      label('l4', 'a', 'A2'), // relabel: keeps its place
      label('l5', 'b'), label('l6', 'b', 'B2'), // cleared then labelled again: moves to the end
      user('m', null),
    ])
    expect([...labels]).toEqual([['a', 'A2'], ['c', 'C'], ['b', 'B2']])
  })
})

describe('buildTree', () => {
  it('§12.34 a chain nests', () => {
    const list = [user('1', null), user('2', '1'), user('3', '2')]
    expect(shape(buildTree(list, buildIndex(list), new Map()))).toEqual([['1', [['2', ['3']]]]])
  })

  it('§12.34 three branches from one entry are three children sorted by timestamp', () => {
    const list = [
      user('1', null),
      entry('message', 'late', '1', at('2026-03-14T15:00:03.000Z')),
      entry('message', 'early', '1', at('2026-03-14T15:00:01.000Z')),
      entry('message', 'mid', '1', at('2026-03-14T15:00:02.000Z')),
    ]
    const tree = buildTree(list, buildIndex(list), new Map())
    expect(shape(tree)).toEqual([['1', ['early', 'mid', 'late']]])
  })

  it('§6.6 unparseable timestamps sort as 0 and ties keep file order', () => {
    const list = [
      user('1', null),
      entry('message', 't2', '1', at('2026-03-14T15:00:02.000Z')),
      entry('message', 'bad', '1', at('not a date')),
      entry('message', 't1a', '1', at('2026-03-14T15:00:01.000Z')),
      entry('message', 't1b', '1', at('2026-03-14T15:00:01.000Z')),
      entry('message', 'none', '1', { timestamp: undefined }),
    ]
    expect(shape(buildTree(list, buildIndex(list), new Map()))).toEqual([['1', ['bad', 'none', 't1a', 't1b', 't2']]])
  })

  it('§12.34 orphan and self-parented entries are roots, in file order', () => {
    const list = [user('1', null), user('o', 'gone'), user('2', '1'), user('s', 's'), user('n', '')]
    expect(shape(buildTree(list, buildIndex(list), new Map()))).toEqual([['1', ['2']], 'o', 's', 'n'])
  })

  it('§6.6 one node per indexed entry; labels appear on nodes', () => {
    const list = [user('1', null), user('dup', '1', 'old'), user('dup', '1', 'new'), label('l', 'dup', 'mark')]
    const byId = buildIndex(list)
    const tree = buildTree(list, byId, buildLabelMap(list))
    expect(shape(tree)).toEqual([['1', ['dup']], 'l'])
    const node = tree[0]!.children[0]!
    expect(node.entry).toBe(list[2])
    expect(node.label).toBe('mark')
    expect('label' in tree[0]!).toBe(false)
  })
})

describe('flatTree', () => {
  it('§6.6 flat nodes in file order with children ids ordered like buildTree', () => {
    const list = [
      user('1', null),
      entry('message', 'b', '1', at('2026-03-14T15:00:05.000Z')),
      entry('message', 'a', '1', at('2026-03-14T15:00:04.000Z')),
      entry('custom', 'o', 'gone', at('2026-03-14T15:00:06.000Z')),
      label('l', 'a', 'mark'),
    ]
    list[4]!.parentId = 'o'
    const flat = flatTree(list, buildIndex(list), buildLabelMap(list))
    expect(flat.map((n) => n.id)).toEqual(['1', 'b', 'a', 'o', 'l'])
    expect(flat[0]).toEqual({ id: '1', parentId: null, type: 'message', timestamp: list[0]!.timestamp, children: ['a', 'b'] })
    expect(flat[2]).toMatchObject({ id: 'a', parentId: '1', label: 'mark', children: [] })
    expect(flat[3]).toMatchObject({ id: 'o', parentId: 'gone', type: 'custom', children: ['l'] })
    expect('label' in flat[1]!).toBe(false)
  })

  it('§6.6 entries on a rootless cycle still appear in the flat tree', () => {
    const list = [user('a', 'b'), user('b', 'a')]
    const byId = buildIndex(list)
    expect(buildTree(list, byId, new Map())).toEqual([])
    expect(flatTree(list, byId, new Map()).map((n) => [n.id, n.children])).toEqual([['a', ['b']], ['b', ['a']]])
  })
})

describe('deep chains', () => {
  it('walkToRoot, buildTree and flatTree handle a 100,000-entry chain', () => {
    const n = 100_000
    const list: SessionEntryBase[] = []
    for (let i = 0; i < n; i++) {
      list.push({ type: 'message', id: `e${i}`, parentId: i === 0 ? null : `e${i - 1}`, timestamp: '2026-03-14T15:00:00.000Z' })
    }
    const byId = buildIndex(list)
    const path = walkToRoot(byId, `e${n - 1}`)
    expect(path).toHaveLength(n)
    expect(path[0]!.id).toBe('e0')
    expect(path[n - 1]!.id).toBe(`e${n - 1}`)

    const roots = buildTree(list, byId, new Map())
    expect(roots).toHaveLength(1)
    let node: SessionTreeNode | undefined = roots[0]
    let depth = 0
    let mismatches = 0
    while (node !== undefined) {
      if (node.entry !== list[depth] || node.children.length > 1) mismatches++
      depth++
      node = node.children[0]
    }
    expect(depth).toBe(n)
    expect(mismatches).toBe(0)

    const flat = flatTree(list, byId, new Map())
    expect(flat).toHaveLength(n)
    expect(flat[n - 2]!.children).toEqual([`e${n - 1}`])
    // Serializable without overflowing the stack, as the HTTP answer does.
    expect(JSON.parse(JSON.stringify(flat))).toHaveLength(n)
  })
})
