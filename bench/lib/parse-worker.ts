/**
 * Parse throughput of one session file, in its own process (`--expose-gc`): plain `JSON.parse`
 * over the file's lines (split beforehand, not timed) against `parseJsonlLenient` over the whole
 * text; and, file read included, `readFileSync` + split + `JSON.parse` per line against the
 * loader's streaming parse (`parseFile`: read, decode and parse the file a chunk at a time);
 * alternating, `runs` times.
 * Prints `{"parse": {...}}`.
 * Usage: node --expose-gc --import tsx bench/lib/parse-worker.ts <file> <runs>
 */
import { readFileSync } from 'node:fs'
import { parseJsonlLenient } from '../../src/session/parser.js'
import { parseFile } from '../../src/session/session-loader.js'
import { FileSessionStorage } from '../../src/storage/index.js'

const file = process.argv[2] as string
const runs = Number(process.argv[3] ?? 3)
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})

async function time (fn: () => unknown): Promise<number> {
  gc()
  const start = performance.now()
  const value = await fn()
  const ms = performance.now() - start
  if (value === undefined) throw new Error('nothing parsed')
  return ms
}

const text = readFileSync(file, 'utf8')
const lines = text.split('\n').filter((l) => l.trim() !== '')
const plainMs: number[] = []
const plainReadMs: number[] = []
const lenientMs: number[] = []
const streamMs: number[] = []
const storage = new FileSessionStorage()
let records = 0
for (let i = 0; i < runs; i++) {
  plainMs.push(await time(() => {
    let last: unknown
    for (const line of lines) last = JSON.parse(line)
    return last
  }))
  lenientMs.push(await time(() => {
    const parsed = parseJsonlLenient(text)
    records = parsed.length
    return parsed
  }))
  plainReadMs.push(await time(() => {
    let last: unknown
    for (const line of readFileSync(file, 'utf8').split('\n')) if (line.trim() !== '') last = JSON.parse(line)
    return last
  }))
  streamMs.push(await time(async () => {
    const parsed = await parseFile(storage, file)
    if (parsed.records.length !== records) throw new Error('the streaming parse disagrees')
    return parsed
  }))
}
process.stdout.write(JSON.stringify({ parse: { bytes: Buffer.byteLength(text), lines: lines.length, records, plainMs, plainReadMs, lenientMs, streamMs } }) + '\n')
