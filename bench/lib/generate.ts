/**
 * Session files for the benchmarks, written straight into a DATA_DIR in the on-disk layout
 * (SPEC.md §2, §3): `sessions/<encoded cwd>/<fileTs>_<id>.jsonl`, a v3 header, then entries.
 * Deterministic (ids count up), so every run reads the same bytes.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { encodeCwd, sessionFileName } from '../../src/session/cwd.js'

export interface GeneratedSession {
  id: string
  path: string
  bytes: number
  entries: number
}

/** Writes lines to a file in ~1 MiB chunks; counts bytes. */
class LineWriter {
  readonly #fd: number
  #chunk = ''
  bytes = 0
  lines = 0

  constructor (path: string) {
    this.#fd = openSync(path, 'w')
  }

  add (record: unknown): void {
    this.#chunk += JSON.stringify(record) + '\n'
    this.lines++
    if (this.#chunk.length >= 1 << 20) this.#flush()
  }

  close (): void {
    this.#flush()
    closeSync(this.#fd)
  }

  #flush (): void {
    this.bytes += writeSync(this.#fd, this.#chunk)
    this.#chunk = ''
  }
}

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const iso = (i: number): string => new Date(T0 + i * 1000).toISOString()
const hexId = (i: number): string => i.toString(16).padStart(8, '0')

function open (dataDir: string, cwd: string, id: string): { w: LineWriter, path: string } {
  const dir = join(dataDir, 'sessions', encodeCwd(cwd))
  mkdirSync(dir, { recursive: true })
  const timestamp = iso(0)
  const path = join(dir, sessionFileName(timestamp, id))
  const w = new LineWriter(path)
  w.add({ type: 'session', version: 3, id, timestamp, cwd })
  return { w, path }
}

function message (id: string, parentId: string | null, i: number, text: string): Record<string, unknown> {
  const role = i % 2 === 0 ? 'user' : 'assistant'
  const message = role === 'user'
    ? { role, content: [{ type: 'text', text }], timestamp: T0 + i * 1000 }
    : { role, content: [{ type: 'text', text }], provider: 'bench', model: 'bench-1', usage: { input: 100, output: 200 }, stopReason: 'stop', timestamp: T0 + i * 1000 }
  return { type: 'message', id, parentId, timestamp: iso(i), message }
}

/**
 * A large session: `entries` message entries of about `entryBytes` bytes on one main chain, a
 * 20-entry side branch every 1,000 entries (off an entry 10 back), one compaction at 60 % of
 * the chain that keeps from 55 %, and a model change; the last line is on the main chain, so
 * the leaf's context crosses the compaction.
 */
export function writeLargeSession (dataDir: string, entries = 50_000, entryBytes = 2048): GeneratedSession {
  const id = 'bench-large-session'
  const { w, path } = open(dataDir, '/bench/large', id)
  const text = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(entryBytes / 27)).slice(0, Math.max(0, entryBytes - 240))
  const main: string[] = []
  let next = 1
  let parent: string | null = null
  const keepAt = Math.floor(entries * 0.55)
  for (let i = 0; i < entries; i++) {
    const eid = hexId(next++)
    w.add(message(eid, parent, i, text))
    main.push(eid)
    parent = eid
    if (i === 10) {
      const mid = hexId(next++)
      w.add({ type: 'model_change', id: mid, parentId: parent, timestamp: iso(i), model: 'bench-2' })
      parent = mid
    }
    if (i === Math.floor(entries * 0.6)) {
      const cid = hexId(next++)
      w.add({ type: 'compaction', id: cid, parentId: parent, timestamp: iso(i), summary: 'The story so far.', firstKeptEntryId: main[keepAt], tokensBefore: 123_456 })
      parent = cid
    }
    if (i > 0 && i % 1000 === 0) {
      let side = main[i - 10] as string
      for (let k = 0; k < 20; k++) {
        const sid = hexId(next++)
        w.add(message(sid, side, i + k, text))
        side = sid
      }
    }
  }
  w.close()
  return { id, path, bytes: w.bytes, entries: w.lines - 1 }
}

/** A linear chain of `n` small message entries (the deep-path case). */
export function writeDeepSession (dataDir: string, n = 100_000): GeneratedSession {
  const id = 'bench-deep-session'
  const { w, path } = open(dataDir, '/bench/deep', id)
  let parent: string | null = null
  for (let i = 0; i < n; i++) {
    const eid = hexId(i + 1)
    w.add(message(eid, parent, i, i % 2 === 0 ? `u${i}` : `a${i}`))
    parent = eid
  }
  w.close()
  return { id, path, bytes: w.bytes, entries: n }
}

/**
 * `count` small durable sessions (header, a user and an assistant message, a model change and
 * four more messages: about 2 KB each) spread over `dirs` working directories.
 */
export function writeManySessions (dataDir: string, count = 10_000, dirs = 100): { ids: string[], bytes: number } {
  const ids: string[] = []
  let bytes = 0
  const text = 'a short exchange about the code base '.repeat(6)
  for (let s = 0; s < count; s++) {
    const id = `bench-${s.toString().padStart(6, '0')}`
    const { w } = open(dataDir, `/bench/project-${s % dirs}`, id)
    let parent: string | null = null
    for (let i = 0; i < 6; i++) {
      const eid = hexId(i + 1)
      w.add(message(eid, parent, i, text))
      parent = eid
    }
    w.close()
    ids.push(id)
    bytes += w.bytes
  }
  return { ids, bytes }
}
