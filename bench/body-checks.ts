/**
 * What the JSON body parser's checks cost on a typical append body (about 1 KiB: an assistant
 * message with text, three tool calls and its usage and cost, from test/fixtures): `JSON.parse`
 * alone (the baseline, what Fastify's parser does with it) beside the nesting check
 * (src/plugins/json-depth.ts) and the scan for numbers a double cannot hold as sent
 * (src/plugins/json-numbers.ts), all timed in this one run. The cost's target is relative: the
 * scan should add well under the parse itself.
 * Run: npx tsx bench/body-checks.ts (rewrites its section of bench/RESULTS.md; BODY_CHECKS_WRITE=0 does not).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../src/plugins/json-depth.js'
import { firstInexactNumber } from '../src/plugins/json-numbers.js'
import { fmt, int, median, table, verdict, writeSection } from './lib/stats.js'

const HEADING = '## JSON body checks on a typical append body (`npx tsx bench/body-checks.ts`)'
const ROUNDS = 15
const PER_ROUND = 20_000

/** The first assistant message of the fixture between 900 and 1300 bytes, as an append body. */
function typicalBody (): string {
  const fixture = readFileSync(join(import.meta.dirname, '..', 'test', 'fixtures', 'pi-v1-large-session.jsonl'), 'utf8')
  const line = fixture.split('\n').find((l) => l.length > 900 && l.length < 1300 && l.includes('"role":"assistant"'))
  if (line === undefined) throw new Error('no typical message in the fixture')
  const { message } = JSON.parse(line) as { message: unknown }
  return JSON.stringify({ type: 'message', message })
}

/** How many numbers `value` holds, at any depth. */
function countNumbers (value: unknown): number {
  if (typeof value === 'number') return 1
  if (typeof value !== 'object' || value === null) return 0
  return Object.values(value).reduce((n: number, v) => n + countNumbers(v), 0)
}

/** Median ns per call of `fn(body)` over ROUNDS rounds of PER_ROUND calls. */
function nsPerCall (body: string, fn: (body: string) => unknown): number {
  let sink = 0
  const rounds: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now()
    for (let i = 0; i < PER_ROUND; i++) if (fn(body) !== undefined) sink++
    rounds.push((performance.now() - start) * 1e6 / PER_ROUND)
  }
  if (sink < 0) throw new Error('unreachable')
  return median(rounds)
}

function main (): void {
  const body = typicalBody()
  const numbers = countNumbers(JSON.parse(body))
  // Warm every path first, so that no figure includes compiling it.
  for (let i = 0; i < 50_000; i++) { JSON.parse(body); nestedDeeperThan(body, MAX_JSON_DEPTH); firstInexactNumber(body) }
  const parse = nsPerCall(body, (b) => JSON.parse(b))
  const depth = nsPerCall(body, (b) => nestedDeeperThan(b, MAX_JSON_DEPTH) ? 1 : undefined)
  const scan = nsPerCall(body, (b) => firstInexactNumber(b))
  const rows = [
    ['`JSON.parse` (baseline)', fmt(parse, 0), '100%', '', ''],
    ['nesting check (`nestedDeeperThan`)', fmt(depth, 0), `${fmt(100 * depth / parse, 0)}%`, '', ''],
    ['number scan (`firstInexactNumber`)', fmt(scan, 0), `${fmt(100 * scan / parse, 0)}%`, '< 50% of the parse', verdict(scan < parse / 2)],
  ]
  const section = [
    HEADING,
    '',
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}: one ${int(Buffer.byteLength(body))}-byte append body (an assistant message with`,
    `${numbers} number tokens, from test/fixtures/pi-v1-large-session.jsonl), the median of ${ROUNDS} rounds of ${int(PER_ROUND)} calls each.`,
    '',
    table(['step', 'ns per body', 'of the parse', 'target', 'met'], rows),
    '',
  ].join('\n')
  process.stdout.write(section + '\n')
  if (process.env.BODY_CHECKS_WRITE !== '0') writeSection(join(import.meta.dirname, 'RESULTS.md'), HEADING, section)
}

main()
