/**
 * The first `GET /context` of a session file on disk (loaded a piece at a time, streamed as it is
 * serialized) answers exactly the text that the whole-file path gives: `parseJsonlLenient` of the
 * whole text, migration, blob refs resolved, `buildSessionContext`, `JSON.stringify`. A listing of
 * such a file agrees with the session it opens as.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { FileBlobStore } from '../../src/blobs/index.js'
import { buildSessionContext } from '../../src/session/context.js'
import { encodeCwd } from '../../src/session/cwd.js'
import { migrateSessionEntries } from '../../src/session/migrate.js'
import { parseJsonlLenient } from '../../src/session/parser.js'
import { resolveBlobRefs } from '../../src/session/persist-transform.js'
import { isEntry } from '../../src/session/tree.js'
import type { SessionEntryBase } from '../../src/session/types.js'
import { buildDiskTestApp } from '../helpers/app.js'
import { FIXTURES } from '../helpers/session-env.js'

const CWD = '/work/context-answer'

/** The context text of `text` by the whole-file path, blobs read from `dataDir`. */
async function expectedContext (dataDir: string, text: string, blobs: 'inline' | 'ref' = 'inline'): Promise<string> {
  const records = parseJsonlLenient(text)
  migrateSessionEntries(records)
  if (blobs === 'inline') await resolveBlobRefs(records, new FileBlobStore(join(dataDir, 'blobs')), () => {})
  const entries = records.slice(1).filter(isEntry) as SessionEntryBase[]
  return JSON.stringify(buildSessionContext(entries))
}

/** A v3 session of about 3 MB: unicode of every width, image blocks by blob ref, lines the parser skips, a compaction. */
function generatedSession (id: string, imageRef: string): string {
  const lines: string[] = [JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: CWD })]
  let parentId: string | null = null
  const add = (entry: Record<string, unknown>, eol = '\n'): void => {
    lines.push(JSON.stringify(entry) + eol.slice(0, -1))
    parentId = entry.id as string
  }
  for (let i = 0; i < 3000; i++) {
    const text = `${i} naïve café — → 😀 \u2028 "quoted" \\ ${'x'.repeat(i % 700)} ${'é✓'.repeat(i % 50)}`
    const message = i % 3 === 0
      ? { role: 'user', content: [{ type: 'text', text }, ...(i % 300 === 0 ? [{ type: 'image', data: imageRef, mimeType: 'image/png' }] : [])], timestamp: i }
      : { role: 'assistant', content: [{ type: 'text', text }], provider: 'anthropic', model: 'claude', usage: { input: i, cost: { total: i / 7 } }, stopReason: 'stop', timestamp: i }
    add({ type: 'message', id: `m${i}`, parentId, timestamp: new Date(i * 1000).toISOString(), message }, i % 97 === 0 ? '\r\n' : '\n')
    if (i === 1200) add({ type: 'compaction', id: 'c1', parentId, timestamp: '2026-01-01T01:00:00.000Z', summary: 'so far', firstKeptEntryId: 'm1100', tokensBefore: 9 })
    if (i % 500 === 7) lines.push('', '   ', 'not json', '[1,2]', '{"type":"message","id":"torn', '{"a":1}{"b":2}', '\u00a0{"type":"label"}')
  }
  lines.push(JSON.stringify({ type: 'custom_message', id: 'x1', parentId, timestamp: 'not a date', customType: 'note', content: 'ünï', display: true }))
  return lines.join('\n') + '\n{"type":"message","id":"torn-tail","parentId":"x1","mess'
}

describe('GET /context of a session file on disk', () => {
  let dir = ''
  afterEach(() => { if (dir !== '') rmSync(dir, { recursive: true, force: true }) })

  /** Places `text` as session `id` under a fresh DATA_DIR; returns the DATA_DIR. */
  const place = (id: string, text: string): string => {
    const sessions = join(dir, 'sessions', encodeCwd(CWD))
    mkdirSync(sessions, { recursive: true })
    writeFileSync(join(sessions, `2026-01-01T00-00-00-000Z_${id}.jsonl`), text)
    return dir
  }

  const firstContext = async (dataDir: string, id: string, query = ''): Promise<string> => {
    const app = await buildDiskTestApp(dataDir)
    try {
      const res = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/context${query}` })
      expect(res.statusCode).toBe(200)
      return res.payload
    } finally {
      await app.close()
    }
  }

  it('answers a generated file (unicode, blob refs, skipped lines, CRLF, a torn tail) as the whole-file path does', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ss-ctx-answer-'))
    const image = Buffer.alloc(3000, 7)
    const { hash } = await new FileBlobStore(join(dir, 'blobs')).put(image)
    const text = generatedSession('gen-session', `blob:sha256:${hash}`)
    place('gen-session', text)
    const expected = await expectedContext(dir, text)
    expect(expected).toContain(image.toString('base64'))
    expect(await firstContext(dir, 'gen-session')).toBe(expected)
    expect(await firstContext(dir, 'gen-session', '?blobs=ref')).toBe(await expectedContext(dir, text, 'ref'))
  })

  /** Places the fixture `name` under a fresh DATA_DIR, as its own session. */
  const placeFixture = (name: string): { dataDir: string, id: string, text: string } => {
    dir = mkdtempSync(join(tmpdir(), 'ss-ctx-answer-'))
    const text = readFileSync(join(FIXTURES, name), 'utf8')
    const id = (JSON.parse(text.slice(0, text.indexOf('\n'))) as { id: string }).id
    const dataDir = place(id, '')
    copyFileSync(join(FIXTURES, name), join(dataDir, 'sessions', encodeCwd(CWD), `2026-01-01T00-00-00-000Z_${id}.jsonl`))
    return { dataDir, id, text }
  }

  it.each(['pi-v1-large-session.jsonl', 'pi-v1-before-compaction.jsonl'])('answers the fixture %s as the whole-file path does', async (name) => {
    const { dataDir, id, text } = placeFixture(name)
    expect(await firstContext(dataDir, id)).toBe(await expectedContext(dataDir, text))
  })

  it('lists a version 1 file with the entry count it has once opened', async () => {
    const { dataDir, id, text } = placeFixture('pi-v1-before-compaction.jsonl')
    const app = await buildDiskTestApp(dataDir)
    try {
      const listed = await app.inject({ method: 'GET', url: '/v1/sessions' })
      const opened = await app.inject({ method: 'GET', url: `/v1/sessions/${id}` })
      expect(opened.json().entryCount).toBe(text.trim().split('\n').length - 1)
      expect(listed.json().sessions.map((s: { id: string, entryCount: number }) => [s.id, s.entryCount])).toEqual([[id, opened.json().entryCount]])
    } finally {
      await app.close()
    }
  })
})
