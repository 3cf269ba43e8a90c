/**
 * The PostgreSQL store against the store contract, then what only a store several servers share
 * has: a journal whose session another server changed refuses its write and says what changed
 * (the lines appended since, or a change to read whole), and hears of the change on the feed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore, type OpenedStore } from '../../src/storage/open-store.js'
import type { StoreChange } from '../../src/storage/store.js'
import { createTestDatabase, pgAvailable, type TestDatabase } from '../helpers/pg.js'
import { header, item, lines, loaded, session, storeContract, userLine } from './contract.js'

describe.runIf(pgAvailable)('PostgreSQL', () => {
  let db: TestDatabase
  beforeAll(async () => { db = await createTestDatabase() })
  afterAll(async () => { await db?.drop() })
  const open = async (): Promise<OpenedStore> => await openStore({ storage: 'postgres', dataDir: '/pg', databaseUrl: db.url })

  storeContract('postgres', async () => {
    const opened = await open()
    return {
      store: opened.store,
      close: async () => {
        await opened.close()
        const { default: pg } = await import('pg')
        const client = new pg.Client({ connectionString: db.url })
        await client.connect()
        await client.query('TRUNCATE ss_sessions, ss_lines, ss_answers, ss_breadcrumbs, ss_search, ss_search_queue')
        await client.end()
      },
    }
  })

  describe('two stores on one database', () => {
    it('a stale journal writes nothing, catches up with what was appended, and hears of every change', async () => {
      const a = await open()
      const b = await open()
      try {
        const heard: StoreChange[] = []
        const stop = b.store.follow((c) => { heard.push(c) })
        const ja = await a.store.create('acme', session('shared'))
        const onB = await loaded(b.store, 'shared')
        const jb = onB?.journal
        if (jb === undefined) throw new Error('B does not find the session')
        await ja.append({ lines: lines(userLine('a1', 'from A')), save: true, info: item('shared'), answers: [] })
        const refused = await jb.append({ lines: lines(userLine('b1', 'from B')), save: true, info: item('shared'), answers: [] })
        expect(refused).toEqual({ ok: false, stale: { kind: 'appended', lines: [userLine('a1', 'from A')] } })
        expect(await jb.append({ lines: lines(userLine('b1', 'from B', 'a1')), save: true, info: item('shared'), answers: [] })).toEqual({ ok: true })
        expect(await ja.refresh()).toEqual({ kind: 'appended', lines: [userLine('b1', 'from B', 'a1')] })
        expect(await ja.rewriteHeader(header('shared', { title: 'T' }), item('shared', { title: 'T' }))).toEqual({ ok: true })
        expect(await jb.append({ lines: lines(userLine('b2', 'x')), save: true, info: item('shared'), answers: [] })).toEqual({ ok: false, stale: { kind: 'replaced' } })
        expect(await ja.remove()).toEqual({ ok: true })
        for (let i = 0; i < 100 && !heard.some((c) => c.kind === 'removed'); i++) await new Promise((resolve) => setTimeout(resolve, 20))
        expect(heard.map((c) => c.kind)).toEqual(['created', 'appended', 'replaced', 'removed'])
        expect(heard.every((c) => c.tenant === 'acme' && c.id === 'shared')).toBe(true)
        expect(heard.at(-1)?.item).toMatchObject({ id: 'shared', title: 'T' })
        stop()
      } finally {
        await a.close()
        await b.close()
      }
    })
  })
})
