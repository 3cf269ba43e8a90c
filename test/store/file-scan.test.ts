/**
 * Reading a session file a piece at a time (src/storage/jsonl/file-scan.ts, search-feed.ts):
 * the pieces hold the file's lines exactly, the listing facts gathered line by line are those of
 * the whole file parsed at once, and a file of many pieces is searchable from its first line to
 * its last, also when a stop cut its reading short.
 */
import Database from 'better-sqlite3'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { listingItemOf } from '../../src/session/listing-item.js'
import { parseJsonlLenient } from '../../src/session/parser.js'
import { parseQuery } from '../../src/search/query.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { LineReader, ListingScan, PIECE_CHARS } from '../../src/storage/jsonl/file-scan.js'
import { JsonlStore } from '../../src/storage/jsonl/jsonl-store.js'
import { header, userLine } from './contract.js'

const dirs: string[] = []
const tempDir = (): string => { const d = mkdtempSync(join(tmpdir(), 'ss-scan-')); dirs.push(d); return d }
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }) })

async function piecesOf (text: string, prefixChars = 0, whole = false): Promise<{ pieces: string[][], reader: LineReader }> {
  const file = join(tempDir(), 'f.jsonl')
  writeFileSync(file, text)
  const reader = new LineReader(new FileSessionStorage(), file, prefixChars, whole ? Buffer.byteLength(text) : undefined)
  const pieces: string[][] = []
  for await (const piece of reader.pieces()) pieces.push(piece)
  return { pieces, reader }
}

function scanned (text: string): ReturnType<ListingScan['item']> {
  const scan = new ListingScan()
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  for (const line of body.split('\n')) scan.line(line)
  return scan.item('/data', 5)
}

describe('reading a session file a piece at a time', () => {
  it('hands on every line exactly, in pieces of about PIECE_CHARS, with the bytes read and the prefix', async () => {
    // Lines longer than a decoded chunk (64 KiB), multi-byte characters across chunk edges, CRLF, a BOM, no last "\n".
    const lines = ['{"type":"session","id":"x"}\r']
    for (let i = 0, chars = 0; chars < 3 * PIECE_CHARS; i++) {
      lines.push(JSON.stringify({ i, text: (i % 7 === 0 ? 'ж€😀' : 'ab').repeat(1 + (i * 7919) % 40_000) }))
      chars += (lines.at(-1) as string).length
    }
    lines.push('{"last":true}')
    const text = '\uFEFF' + lines.join('\n')
    const { pieces, reader } = await piecesOf(text, 100)
    expect(pieces.flat()).toEqual(lines)
    expect(pieces.length).toBeGreaterThanOrEqual(3)
    for (const piece of pieces.slice(0, -1)) {
      const chars = piece.reduce((n, l) => n + l.length, 0)
      expect(chars).toBeGreaterThanOrEqual(PIECE_CHARS)
      expect(chars).toBeLessThan(PIECE_CHARS + 200_000)
    }
    expect(reader.bytes).toBe(Buffer.byteLength(text, 'utf8'))
    expect(reader.prefix).toBe(text.slice(0, 100))
    // A final "\n" makes no empty last line; an empty file has no piece; a small file read whole gives the same.
    for (const whole of [false, true]) {
      expect((await piecesOf('a\nb\n', 0, whole)).pieces).toEqual([['a', 'b']])
      expect((await piecesOf('', 0, whole)).pieces).toEqual([])
      const small = await piecesOf('\uFEFF{"x":1}\r\nж€😀\nlast', 3, whole)
      expect(small.pieces).toEqual([['{"x":1}\r', 'ж€😀', 'last']])
      expect(small.reader.bytes).toBe(Buffer.byteLength('\uFEFF{"x":1}\r\nж€😀\nlast'))
      expect(small.reader.prefix).toBe('\uFEFF{"')
    }
  })

  it('gathers the listing facts the whole file parsed at once gives', () => {
    const slot = JSON.stringify({ type: 'title', v: 1, title: 'From the slot', updatedAt: '2026-03-14T15:04:09.000Z', pad: '   ', source: 'user' })
    const texts = [
      readFileSync(join(import.meta.dirname, '..', 'fixtures', 'pi-v1-large-session.jsonl'), 'utf8'),
      readFileSync(join(import.meta.dirname, '..', 'fixtures', 'pi-v1-before-compaction.jsonl'), 'utf8'),
      [header('a'), userLine('1', 'first'), 'not json', '[1]', userLine('2', 'second', '1')].join('\n'),
      [slot, header('b', { title: 'old' }), userLine('1', 'hello')].join('\n') + '\n',
      [slot, userLine('1', 'no header behind the slot')].join('\n'),
      [userLine('1', 'no header')].join('\n'),
      '\uFEFF' + header('c') + '\r\n' + userLine('1', 'crlf') + '\r\n',
      header('d'),
      '',
    ]
    for (const text of texts) expect(scanned(text)).toEqual(listingItemOf(parseJsonlLenient(text), '/data', 5))
    expect(scanned(texts[3] as string)?.title).toBe('From the slot')
  })
})

describe('the search index of a file of many pieces', () => {
  const bigSession = (dir: string, id = 'big'): void => {
    const body = [header(id, { cwd: '/big' }), userLine('e0', 'wombat opens the session')]
    for (let i = 1, chars = 0; chars < 3 * PIECE_CHARS; i++) {
      body.push(userLine(`e${i}`, `filler ${i} ${'lorem ipsum '.repeat(100)}`, `e${i - 1}`))
      chars += (body.at(-1) as string).length
    }
    body.push(userLine('last', 'platypus closes the session', 'e1'))
    mkdirSync(join(dir, 'sessions', '--big--'), { recursive: true })
    writeFileSync(join(dir, 'sessions', '--big--', `2026-03-14T15-04-07-123Z_${id}.jsonl`), body.join('\n') + '\n')
  }
  const hits = async (store: JsonlStore, word: string): Promise<string[]> =>
    (await store.search('default', { terms: parseQuery(word), thinking: false, offset: 0, limit: 10 })).hits.map((h) => h.entryId ?? '-')
  const open = (dir: string): JsonlStore => JsonlStore.open({ dataDir: dir, storage: new FileSessionStorage() })

  it('finds its first and last lines once the start-up reading is over', async () => {
    const dir = tempDir()
    bigSession(dir)
    const store = open(dir)
    await store.ready()
    expect((await store.list('default', { limit: 10, includeEmpty: true })).items.map((i) => [i.id, i.messageCount])).toEqual([['big', expect.any(Number)]])
    for (let i = 0; i < 500 && (await hits(store, 'platypus')).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await hits(store, 'wombat')).toEqual(['e0'])
    expect(await hits(store, 'platypus')).toEqual(['last'])
    await store.close()
  })

  it('holds every file at the next start when a stop cut the reading short', async () => {
    const dir = tempDir()
    let store = open(dir)
    await store.ready()
    await store.close()
    // Written while no server ran: found changed by the next start's check, then read for the search index.
    for (const name of ['big', 'big2', 'big3']) bigSession(dir, name)
    store = open(dir)
    await store.ready()
    await store.close()
    // The files left unread are marked for the next start's check, which reads them again.
    const listing = new Database(join(dir, '.session-store', 'index.sqlite'), { readonly: true })
    expect((listing.prepare('SELECT count(*) AS n FROM sessions WHERE checked = 0').get() as { n: number }).n).toBeGreaterThan(0)
    listing.close()
    store = open(dir)
    await store.ready()
    for (let i = 0; i < 500 && (await hits(store, 'platypus')).length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await hits(store, 'wombat')).toEqual(['e0', 'e0', 'e0'])
    expect(await hits(store, 'platypus')).toEqual(['last', 'last', 'last'])
    await store.close()
  })
})
