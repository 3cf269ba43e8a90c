/**
 * The search part of the store contract (src/storage/store.ts `search`), run against every store
 * by contract.ts: what is searched, tenant isolation, removals, moves, renames and forks, the
 * query language, any script, and the largest values a session may hold.
 */
import { expect, it } from 'vitest'
import { parseQuery } from '../../src/search/query.js'
import type { Journal, NewSession, SearchHit, SearchQuery, SessionStore } from '../../src/storage/store.js'
import { header, item, lines, session, userLine } from './contract.js'

const T = 'acme'

export function message (id: string, role: string, content: unknown, parentId: string | null = null, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: 'message', id, parentId, timestamp: `2026-03-14T15:04:${String(10 + id.length).padStart(2, '0')}.000Z`, message: { role, content, ...extra } })
}

/** Every kind of text a session holds, one distinct word each. */
const KINDS = [
  message('u1', 'user', 'please fix the upload zebracorn'),
  message('a1', 'assistant', [{ type: 'thinking', thinking: 'ponder quixotical' }, { type: 'text', text: 'fixed the vermilion race' },
    { type: 'toolCall', id: 't1', name: 'grepolater', arguments: { path: 'src/uploadpath.ts', flags: ['-n', 'marmalade'] } }]),
  message('r1', 'toolResult', [{ type: 'text', text: 'found gobbledygook here' }], 'a1', { toolName: 'grepolater', toolCallId: 't1' }),
  JSON.stringify({ type: 'custom_message', id: 'c1', parentId: 'r1', timestamp: '2026-03-14T15:05:00.000Z', customType: 'x', content: 'extension says kumquat', display: true }),
  JSON.stringify({ type: 'compaction', id: 'k1', parentId: 'c1', timestamp: '2026-03-14T15:06:00.000Z', summary: 'summary mentions pomegranate', shortSummary: 'short nectarine', firstKeptEntryId: 'u1', tokensBefore: 10 }),
  JSON.stringify({ type: 'branch_summary', id: 'b1', parentId: 'k1', timestamp: '2026-03-14T15:07:00.000Z', fromId: 'k1', summary: 'abandoned the persimmon path' }),
  JSON.stringify({ type: 'custom', id: 'x1', parentId: 'b1', timestamp: '2026-03-14T15:08:00.000Z', customType: 'state', data: { note: 'hiddenword' } }),
  JSON.stringify({ type: 'service_tier_change', id: 'x2', parentId: 'x1', timestamp: '2026-03-14T15:09:00.000Z', tier: 'unknownword' }),
  JSON.stringify({ type: 'label', id: 'x3', parentId: 'x2', timestamp: '2026-03-14T15:10:00.000Z', targetId: 'u1', label: 'labelword' }),
]

export function searchContract (open: () => SessionStore, create: (n: NewSession, tenant?: string) => Promise<Journal>): void {
  const find = async (q: string, over: Partial<SearchQuery> = {}, tenant = T): Promise<SearchHit[]> =>
    (await open().search(tenant, { terms: parseQuery(q), thinking: false, offset: 0, limit: 50, ...over })).hits
  const where = async (q: string, over: Partial<SearchQuery> = {}): Promise<string[]> =>
    (await find(q, over)).map((h) => `${h.sessionId}/${h.entryId ?? '-'}`)

  it('searches message text, tool calls and results, custom messages, summaries and titles; thinking on request; nothing else', async () => {
    await create(session('kinds', KINDS, {}, { title: 'Title apricot' }))
    await create({ ...session('kinds-t', [], {}, { title: 'Title apricot' }), lines: lines(header('kinds-t', { title: 'Title apricot' })) })
    const one = async (word: string): Promise<string[]> => await where(word)
    expect(await one('zebracorn')).toEqual(['kinds/u1'])
    expect(await one('vermilion')).toEqual(['kinds/a1'])
    expect((await one('grepolater')).sort()).toEqual(['kinds/a1', 'kinds/r1'])
    expect(await one('marmalade')).toEqual(['kinds/a1'])
    expect(await one('uploadpath')).toEqual(['kinds/a1'])
    expect(await one('gobbledygook')).toEqual(['kinds/r1'])
    expect(await one('kumquat')).toEqual(['kinds/c1'])
    expect(await one('pomegranate')).toEqual(['kinds/k1'])
    expect(await one('nectarine')).toEqual(['kinds/k1'])
    expect(await one('persimmon')).toEqual(['kinds/b1'])
    expect(await one('apricot')).toEqual(['kinds-t/-'])
    for (const word of ['hiddenword', 'unknownword', 'labelword', 'quixotical']) expect(await one(word)).toEqual([])
    expect(await where('quixotical', { thinking: true })).toEqual(['kinds/a1'])
    const [hit] = await find('zebracorn')
    expect(hit).toMatchObject({ sessionId: 'kinds', entryId: 'u1', type: 'message', role: 'user', timestamp: '2026-03-14T15:04:12.000Z', cwd: '/w', title: 'Title apricot' })
    expect(hit?.snippet).toBe('please fix the upload «zebracorn»')
    expect(hit?.score).toBeGreaterThan(0)
    expect((await find('persimmon'))[0]).toMatchObject({ type: 'branch_summary', role: null })
  })

  it('answers only the tenant that asks', async () => {
    await create(session('mine', [userLine('m1', 'shared secret walnut')]))
    await create(session('theirs', [userLine('t1', 'shared secret walnut')]), 'other')
    expect((await find('walnut')).map((h) => h.sessionId)).toEqual(['mine'])
    expect((await find('walnut', {}, 'other')).map((h) => h.sessionId)).toEqual(['theirs'])
    expect(await find('walnut', {}, 'nobody')).toEqual([])
  })

  it('forgets a removed session at once, and a replaced session\'s old text', async () => {
    const j = await create(session('gone', [userLine('g1', 'ephemeral cassowary')]))
    expect(await where('cassowary')).toEqual(['gone/g1'])
    await j.remove()
    expect(await where('cassowary')).toEqual([])
    const r = await create(session('swap', [userLine('s1', 'original ocelot')]))
    await r.replace(lines(header('swap'), userLine('s2', 'migrated ibex')), item('swap'))
    expect(await where('ocelot')).toEqual([])
    expect(await where('ibex')).toEqual(['swap/s2'])
  })

  it('follows appends, moves, renames and forks', async () => {
    const j = await create(session('live', [userLine('l1', 'first okapi')]))
    await j.append({ lines: lines(userLine('l2', 'then narwhal', 'l1')), save: true, info: item('live'), answers: [] })
    expect(await where('narwhal')).toEqual(['live/l2'])
    await j.rewriteHeader(header('live', { cwd: '/moved', title: 'Renamed axolotl' }), item('live', { cwd: '/moved', title: 'Renamed axolotl' }))
    expect(await find('narwhal')).toMatchObject([{ cwd: '/moved', title: 'Renamed axolotl' }])
    expect(await where('narwhal', { cwd: '/moved' })).toEqual(['live/l2'])
    expect(await where('narwhal', { cwd: '/w' })).toEqual([])
    expect(await where('axolotl')).toEqual(['live/-'])
    await j.rewriteHeader(header('live', { cwd: '/moved', title: 'Other name' }), item('live', { cwd: '/moved', title: 'Other name' }))
    expect(await where('axolotl')).toEqual([])
    await create(session('fork', [userLine('l1', 'first okapi'), userLine('l2', 'then narwhal', 'l1')], {}, { title: 'Other name' }))
    expect((await where('okapi')).sort()).toEqual(['fork/l1', 'live/l1'])
  })

  it('takes words, phrases, exclusions and prefixes; best match first, then newest', async () => {
    await create(session('q', [
      userLine('p1', 'the quick brown fox'),
      userLine('p2', 'brown quick fox'),
      userLine('p3', 'a fox is a fox is a fox, said the fox'),
      userLine('p4', 'prefixing preferences'),
    ]))
    expect((await where('quick fox')).sort()).toEqual(['q/p1', 'q/p2'])
    expect(await where('"quick brown"')).toEqual(['q/p1'])
    expect(await where('fox -brown')).toEqual(['q/p3'])
    expect((await where('fox -"quick brown"')).sort()).toEqual(['q/p2', 'q/p3'])
    // With a word excluded, the hits left are still ranked and marked by the wanted words.
    const kept = await find('fox -"quick brown"')
    expect(kept.map((h) => h.entryId)).toEqual(['p3', 'p2'])
    expect(kept[0]?.score).toBeGreaterThan(kept[1]?.score ?? Infinity)
    expect(kept[1]?.snippet).toContain('«fox»')
    expect(await where('prefer*')).toEqual(['q/p4'])
    expect(await where('FOX', { limit: 1 })).toEqual(['q/p3'])
    const page1 = await open().search(T, { terms: parseQuery('fox'), thinking: false, offset: 0, limit: 2 })
    const page2 = await open().search(T, { terms: parseQuery('fox'), thinking: false, offset: 2, limit: 2 })
    expect(page1.more).toBe(true)
    expect(page2.more).toBe(false)
    expect([...page1.hits, ...page2.hits].map((h) => h.entryId).sort()).toEqual(['p1', 'p2', 'p3'])
    expect(page1.hits[0]?.score).toBeGreaterThanOrEqual(page1.hits[1]?.score ?? 0)
  })

  it('finds Japanese words without spaces and emoji', async () => {
    await create(session('intl', [
      userLine('j1', '東京都に住んでいます。アップロードの競合を修正しました'),
      userLine('e1', 'shipped it 🚀🚀 and 👍🏽'),
      userLine('d1', 'Crème brûlée'),
    ]))
    expect(await where('東京')).toEqual(['intl/j1'])
    expect(await where('住んでいます')).toEqual(['intl/j1'])
    expect(await where('修正')).toEqual(['intl/j1'])
    expect(await where('🚀')).toEqual(['intl/e1'])
    expect(await where('👍')).toEqual(['intl/e1'])
    expect(await where('creme brulee')).toEqual(['intl/d1'])
    const [hit] = await find('🚀')
    expect(hit?.snippet).toContain('«🚀»')
    expect((await find('東京'))[0]?.snippet).toContain('«東京»')
  })

  it('indexes 500,000-character strings and 1,000 levels of nesting', async () => {
    const big = 'lorem '.repeat(83_000) + 'needlebig'
    let nested: unknown = 'deepneedle'
    for (let i = 0; i < 1000; i++) nested = { d: nested }
    await create(session('huge', [
      userLine('h1', big),
      message('h2', 'assistant', [{ type: 'toolCall', id: 't', name: 'deep', arguments: nested }]),
    ]))
    expect(big.length).toBeGreaterThan(490_000)
    expect(await where('needlebig')).toEqual(['huge/h1'])
    expect(await where('deepneedle')).toEqual(['huge/h2'])
    expect((await find('needlebig'))[0]?.snippet).toMatch(/«needlebig»$/)
  })
}
