import { describe, expect, it } from 'vitest'
import { PgSessionStorage } from '../../../src/storage/postgres/pg-session-storage.js'
import { sessionText, sessionTextChunks } from '../../../src/storage/postgres/session-text.js'
import { pgAvailable, useMigratedDatabase } from '../../helpers/pg.js'

const header = (id: string): string => JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/w' })

/** Entry lines that make a wrong join show: multi-byte and astral characters, escapes, tabs, a CR kept at a line's end. */
function entryLine (i: number): string {
  const texts = ['héllo wörld', '日本語のテキスト', 'emoji 😀 and 🧪', 'line\\nbreak \\"quoted\\" back\\\\slash', 'tab\there', `plain ${i}`]
  const line = JSON.stringify({ type: 'message', id: `e${i}`, parentId: i === 0 ? null : `e${i - 1}`, message: { role: 'user', content: texts[i % texts.length] } })
  return i % 97 === 5 ? `${line}\r` : line
}

describe.runIf(pgAvailable)('the text of a stored session', () => {
  const database = useMigratedDatabase(2)
  let files = 0

  /** A session stored as rows; its file text and id. */
  const stored = async (entries: number): Promise<{ id: string, text: string }> => {
    const id = `text-${++files}`
    const text = `${header(id)}\n${Array.from({ length: entries }, (_, i) => `${entryLine(i)}\n`).join('')}`
    const storage = await PgSessionStorage.open(database.pool, { dataDir: '/session-text' })
    await storage.writeText(`/session-text/sessions/--w--/${id}.jsonl`, text)
    const kept = await database.pool.query('SELECT count(*)::int AS n FROM ss_entries WHERE tenant = $1 AND session = $2', ['default', id])
    expect(kept.rows[0].n).toBe(entries)
    return { id, text }
  }

  const chunks = async (id: string, pageRows: number): Promise<string[]> => {
    const pieces: string[] = []
    for await (const piece of sessionTextChunks(database.pool, 'default', id, pageRows)) pieces.push(piece)
    return pieces
  }

  it('joins many pages, each of several pieces, to the file byte for byte', async () => {
    const { id, text } = await stored(1234)
    const pieces = await chunks(id, 250)
    expect(pieces.join('')).toBe(text)
    expect(Buffer.from(pieces.join(''), 'utf8').equals(Buffer.from(text, 'utf8'))).toBe(true)
    // The header, then every piece a run of whole lines.
    expect(pieces[0]).toBe(`${header(id)}\n`)
    expect(pieces.length).toBeGreaterThan(1 + Math.ceil(1234 / 250))
    expect(pieces.every((piece) => piece.endsWith('\n') && !piece.startsWith('\n'))).toBe(true)
    expect(await sessionText(database.pool, 'default', id, 250)).toBe(text)
  })

  it('ends cleanly when the last page is full, and reads a session of only its header', async () => {
    const full = await stored(600)
    expect((await chunks(full.id, 200)).join('')).toBe(full.text)
    expect((await chunks(full.id, 600)).join('')).toBe(full.text)
    const empty = await stored(0)
    expect(await chunks(empty.id, 200)).toEqual([`${header(empty.id)}\n`])
  })

  it('pages by seq across gaps in it', async () => {
    const { id, text } = await stored(500)
    await database.pool.query('DELETE FROM ss_entries WHERE tenant = $1 AND session = $2 AND seq % 7 = 3', ['default', id])
    const lines = text.split('\n').slice(0, -1)
    const expected = `${lines.filter((_, i) => i === 0 || i % 7 !== 3).join('\n')}\n`
    expect((await chunks(id, 300)).join('')).toBe(expected)
  })
})
