/**
 * Parse throughput of one session file, in its own process (`--expose-gc`): `parseJsonlLenient`
 * over the whole text (splitting included) against plain `JSON.parse` over the file's lines
 * (split beforehand, not timed), once keeping every result in an array (the parser's output) and
 * once dropping each result at once; alternating, `runs` times.
 * Prints `{"parse": {...}}`.
 * Usage: node --expose-gc --import tsx bench/lib/parse-worker.ts <file> <runs>
 */
import { readFileSync } from 'node:fs'
import { parseJsonlLenient } from '../../src/session/parser.js'

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
const plainKeptMs: number[] = []
const lenientMs: number[] = []
let records = 0
for (let i = 0; i < runs; i++) {
  plainMs.push(await time(() => {
    let last: unknown
    for (const line of lines) last = JSON.parse(line)
    return last
  }))
  plainKeptMs.push(await time(() => {
    const kept: unknown[] = []
    for (const line of lines) kept.push(JSON.parse(line))
    return kept
  }))
  lenientMs.push(await time(() => {
    const parsed = parseJsonlLenient(text)
    records = parsed.length
    return parsed
  }))
}
process.stdout.write(JSON.stringify({ parse: { bytes: Buffer.byteLength(text), lines: lines.length, records, plainMs, plainKeptMs, lenientMs } }) + '\n')
