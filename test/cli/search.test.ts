/**
 * `session-store search <query> --server <url>` and `session-store reindex <DATA_DIR>`: hits
 * printed with their marked snippets (or as JSON lines), refused queries, and an index built
 * anew from the files with progress.
 */
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { runCli } from '../../src/cli/run.js'
import { parseQuery } from '../../src/search/query.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { JsonlStore } from '../../src/storage/jsonl/jsonl-store.js'
import { buildTestApp } from '../helpers/app.js'
import { append, assistant, createSession, message, user } from '../http/session-helpers.js'
import { session, userLine } from '../store/contract.js'
import { memoryIo } from './helpers.js'

describe('session-store search', () => {
  let app: App
  let base: string
  beforeEach(async () => {
    app = await buildTestApp()
    base = await app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterEach(async () => { await app.close() })

  it('prints each hit with its marked snippet, or JSON lines, and exits 1 on a refused query', async () => {
    const s = await createSession(app, { cwd: '/cli', title: 'Upload work' })
    const r = await append(app, s.header.id, { entries: [message(user('the upload race again')), message(assistant('fixed'))] })
    const text = memoryIo()
    expect(await runCli(['search', 'upload race', '--server', base], text.io)).toBe(0)
    expect(text.stdout()).toBe(`${s.header.id} ${r.entries[0]?.id} ${r.entries[0]?.timestamp} Upload work\n  the «upload» «race» again\n`)
    const json = memoryIo()
    expect(await runCli(['search', 'race', '--server', base, '--json', '--cwd', '/cli', '--limit', '5'], json.io)).toBe(0)
    expect(JSON.parse(json.stdout())).toMatchObject({ sessionId: s.header.id, snippet: 'the upload «race» again' })
    const none = memoryIo()
    expect(await runCli(['search', 'race', '--server', base, '--cwd', '/elsewhere'], none.io)).toBe(0)
    expect(none.stderr()).toBe('no hits\n')
    const refused = memoryIo()
    expect(await runCli(['search', '--server', base, '--', '-race'], refused.io)).toBe(1)
    expect(refused.stderr()).toMatch(/not excluded/)
    const usage = memoryIo()
    expect(await runCli(['search', 'race'], usage.io)).toBe(2)
  })
})

describe('session-store reindex', () => {
  let dir: string
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'ss-cli-reindex-')) })
  afterEach(() => { rmSync(dir, { recursive: true, force: true }) })

  const hitsOf = async (word: string): Promise<string[]> => {
    const store = JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })
    try {
      await store.ready()
      return (await store.search('default', { terms: parseQuery(word), thinking: false, offset: 0, limit: 10 })).hits.map((h) => h.sessionId)
    } finally {
      await store.close()
    }
  }

  it('builds the index anew from the files, with progress on a terminal', async () => {
    const store = JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })
    for (let i = 0; i < 3; i++) await (await store.create('default', session(`r${i}`, [userLine('u', `reindexed marmot ${i}`)]))).close()
    await store.close()
    expect((await hitsOf('marmot')).sort()).toEqual(['r0', 'r1', 'r2'])
    // An index that lost its documents but still says it holds every session.
    const db = new Database(join(dir, '.session-store', 'search.sqlite'))
    db.exec('DELETE FROM search_docs; DELETE FROM search_text;')
    db.close()
    expect(await hitsOf('marmot')).toEqual([])
    const out = memoryIo({}, dir, true)
    expect(await runCli(['reindex', dir], out.io)).toBe(0)
    expect(out.stderr()).toContain('[3/3] indexing')
    expect(out.stdout()).toMatch(/^built the search index of .* in \d+\.\d s\n$/)
    expect((await hitsOf('marmot')).sort()).toEqual(['r0', 'r1', 'r2'])
    expect(await runCli(['reindex'], memoryIo().io)).toBe(2)
  })
})
