/**
 * The disk store's search index (src/storage/jsonl/search-index.ts) beyond the contract: built
 * again when missing, damaged or kept stale, from the files an agent wrote too; the lag shown by
 * the gauges while changes wait; and a failing index that never costs an append.
 */
import Database from 'better-sqlite3'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { renderMetrics } from '../../src/metrics/instruments.js'
import { parseQuery } from '../../src/search/query.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { JsonlStore } from '../../src/storage/jsonl/jsonl-store.js'
import { BACKLOG_CHARS } from '../../src/storage/jsonl/search-feed.js'
import { SearchIndex } from '../../src/storage/jsonl/search-index.js'
import { recordingLogger, type LogLine } from '../helpers/session-env.js'
import { header, item, lines, session, textOf, userLine } from './contract.js'

const dirs: string[] = []
const tempDir = (): string => { const d = mkdtempSync(join(tmpdir(), 'ss-search-')); dirs.push(d); return d }
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }) })

const open = (dir: string, searchIndex = true): JsonlStore => JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage(), searchIndex })
const hits = async (store: JsonlStore, word: string): Promise<string[]> =>
  (await store.search('default', { terms: parseQuery(word), thinking: false, offset: 0, limit: 50 })).hits.map((h) => `${h.sessionId}/${h.entryId ?? '-'}`).sort()

/** Waits until the index holds what the store was told (the build at start runs in the background). */
async function settled (store: JsonlStore, word: string, want: string[]): Promise<void> {
  for (let i = 0; i < 200 && JSON.stringify(await hits(store, word)) !== JSON.stringify(want); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  expect(await hits(store, word)).toEqual(want)
}

function gauge (text: string, name: string): number {
  return Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.slice(name.length + 1))
}

describe('the disk search index', () => {
  it('is built again from the files when missing, damaged, or kept with SEARCH_INDEX off meanwhile', async () => {
    const dir = tempDir()
    let store = open(dir)
    for (let i = 0; i < 3; i++) await (await store.create('default', session(`s${i}`, [userLine('a', `persistent quokka ${i}`)]))).close()
    await store.close()
    const index = join(dir, '.session-store', 'index.sqlite')
    rmSync(index)
    rmSync(`${index}-wal`, { force: true })
    // An agent wrote a session while no server ran.
    mkdirSync(join(dir, 'sessions', '--agent--'), { recursive: true })
    writeFileSync(join(dir, 'sessions', '--agent--', 'x_agent.jsonl'), `${header('agent', { cwd: '/agent' })}\n${userLine('q', 'quokka from an agent')}\n`)
    store = open(dir)
    await settled(store, 'quokka', ['agent/q', 's0/a', 's1/a', 's2/a'])
    await store.close()
    writeFileSync(index, 'not a database '.repeat(500))
    rmSync(`${index}-wal`, { force: true })
    store = open(dir)
    await settled(store, 'quokka', ['agent/q', 's0/a', 's1/a', 's2/a'])
    await store.close()
    // The search index's own file, gone or damaged.
    const searchFile = join(dir, '.session-store', 'search.sqlite')
    for (const damage of [() => { rmSync(searchFile) }, () => { writeFileSync(searchFile, 'not a database '.repeat(500)) }]) {
      damage()
      rmSync(`${searchFile}-wal`, { force: true })
      store = open(dir)
      await settled(store, 'quokka', ['agent/q', 's0/a', 's1/a', 's2/a'])
      await store.close()
    }
    // Off: nothing is indexed, search is refused, and the index is known to be stale.
    store = open(dir, false)
    const j = await store.create('default', session('late', [userLine('l', 'quokka added while off')]))
    await expect(store.search('default', { terms: parseQuery('quokka'), thinking: false, offset: 0, limit: 5 })).rejects.toMatchObject({ code: 'SS_SEARCH_INDEX_OFF', statusCode: 503 })
    await j.close()
    await store.close()
    store = open(dir)
    await settled(store, 'quokka', ['agent/q', 'late/l', 's0/a', 's1/a', 's2/a'])
    await store.close()
  })

  it('is built at a first start with little waiting at a time, and a reindex meanwhile joins that build; ss_search_building shows both', async () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'sessions', '--many--'), { recursive: true })
    // Files an agent wrote, together three times what may wait to be indexed, each small enough to be read whole.
    const filler = 'lorem ipsum '.repeat(1000)
    let chars = 0
    let n = 0
    for (; chars < 3 * BACKLOG_CHARS; n++) {
      const body = [header(`m${n}`, { cwd: '/many' }), userLine('first', `echidna ${n}`)]
      for (let i = 0; i < 20; i++) body.push(userLine(`f${i}`, filler, i === 0 ? 'first' : `f${i - 1}`))
      const text = body.join('\n') + '\n'
      chars += text.length
      writeFileSync(join(dir, 'sessions', '--many--', `2026-03-14T15-04-07-123Z_m${n}.jsonl`), text)
    }
    const waiting: number[] = []
    const spied = vi.spyOn(SearchIndex.prototype, 'pendingChars', 'get')
    const clear = vi.spyOn(SearchIndex.prototype, 'clear')
    try {
      const store = open(dir)
      // Scraped before any file was read: the build at start is under way.
      const atStart = renderMetrics()
      await store.ready()
      await store.reindex(() => {})
      expect(gauge((await atStart).body, 'ss_search_building')).toBe(1)
      waiting.push(...spied.mock.results.map((r) => r.value as number))
      // Emptied once, when the index was found missing: the reindex waited for the build under way.
      expect(clear).toHaveBeenCalledTimes(1)
      const built = (await renderMetrics()).body
      expect(gauge(built, 'ss_search_pending')).toBe(0)
      expect(gauge(built, 'ss_search_building')).toBe(0)
      expect((await hits(store, 'echidna')).length).toBe(Math.min(n, 50))
      // A reindex of its own, and one more that joins it: both are told the progress of the one build.
      const scrapes: Array<ReturnType<typeof renderMetrics>> = []
      const told: Array<Array<[number, number]>> = [[], []]
      await Promise.all([
        store.reindex((done, total) => {
          if (scrapes.length === 0) scrapes.push(renderMetrics())
          told[0]?.push([done, total])
        }),
        store.reindex((done, total) => { told[1]?.push([done, total]) }),
      ])
      expect(clear).toHaveBeenCalledTimes(2)
      for (const calls of told) expect(calls.at(-1)).toEqual([n, n])
      expect(gauge((await scrapes[0] as Awaited<ReturnType<typeof renderMetrics>>).body, 'ss_search_building')).toBe(1)
      expect(gauge((await renderMetrics()).body, 'ss_search_building')).toBe(0)
      expect((await hits(store, 'echidna')).length).toBe(Math.min(n, 50))
      await store.close()
    } finally {
      spied.mockRestore()
      clear.mockRestore()
    }
    // What waited never held more than the backlog and a file each from the check and from the reading
    // after it: files beyond it were read again later (all of them waited at once before).
    expect(Math.max(...waiting)).toBeLessThanOrEqual(BACKLOG_CHARS + 2 * chars / n)
  })

  it('shows what waits in ss_search_pending and ss_search_lag_seconds, and catches up', async () => {
    const dir = tempDir()
    const store = open(dir)
    await store.ready()
    const j = await store.create('default', session('lag', []))
    const many = Array.from({ length: 20_000 }, (_, i) => userLine(`e${i}`, `entry number ${i} of a long session`))
    await j.append({ lines: lines(...many), save: true, info: item('lag'), answers: [] })
    const waiting = (await renderMetrics()).body
    expect(gauge(waiting, 'ss_search_pending')).toBeGreaterThan(0)
    expect(gauge(waiting, 'ss_search_lag_seconds')).toBeGreaterThanOrEqual(0)
    for (let i = 0; i < 500 && gauge((await renderMetrics()).body, 'ss_search_pending') > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    const after = (await renderMetrics()).body
    expect(gauge(after, 'ss_search_pending')).toBe(0)
    expect(gauge(after, 'ss_search_lag_seconds')).toBe(0)
    expect(await hits(store, '"number 12345"')).toEqual(['lag/e12345'])
    await j.close()
    await store.close()
  })

  it('is written by its worker thread, which starts from the sources as it does compiled (no failure falls back)', async () => {
    const logs: LogLine[] = []
    const store = JsonlStore.open({ dataDir: tempDir(), storage: new FileSessionStorage(), searchIndex: true, logger: recordingLogger(logs) })
    await (await store.create('default', session('w', [userLine('a', 'numbat in the worker')]))).close()
    await settled(store, 'numbat', ['w/a'])
    // The worker runs at a lower priority than the server's threads (Linux: a nice value per thread).
    const nice = (): number[] => readdirSync('/proc/self/task').map((t) => Number(readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]))
    if (process.platform === 'linux' && os.getPriority() < 10) expect(nice().filter((n) => n === Math.min(19, os.getPriority() + 10))).toHaveLength(1)
    await store.close()
    expect(logs.filter((l) => l.level === 'error')).toEqual([])
  })

  it('merges its segments 8 at a time, also once a reindex made its tables anew', async () => {
    const dir = tempDir()
    const automerge = (): unknown => {
      const db = new Database(join(dir, '.session-store', 'search.sqlite'), { readonly: true })
      try {
        return (db.prepare("SELECT v FROM search_text_config WHERE k = 'automerge'").get() as { v: unknown } | undefined)?.v
      } finally {
        db.close()
      }
    }
    let store = open(dir)
    await (await store.create('default', session('m', [userLine('a', 'merged wombat')]))).close()
    await settled(store, 'wombat', ['m/a'])
    expect(automerge()).toBe(8)
    await store.reindex(() => {})
    await store.close()
    expect(automerge()).toBe(8)
    store = open(dir)
    await settled(store, 'wombat', ['m/a'])
    await store.close()
  })

  it('never costs an append: an index that cannot be written leaves every append stored', async () => {
    const dir = tempDir()
    const store = open(dir)
    await store.ready()
    const j = await store.create('default', session('safe', []))
    // Something outside the server broke the index's tables.
    const db = new Database(join(dir, '.session-store', 'search.sqlite'))
    db.exec('DROP TABLE search_text')
    db.close()
    for (let i = 0; i < 5; i++) expect(await j.append({ lines: lines(userLine(`k${i}`, `kept ${i}`)), save: true, info: item('safe'), answers: [] })).toEqual({ ok: true })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect((await textOf(store, 'safe', 'default'))?.split('\n')).toHaveLength(7)
    await j.close()
    await store.close()
  })
})
