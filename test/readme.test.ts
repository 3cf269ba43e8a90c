/**
 * The README's curl walk-through works as written: its commands run in order against a real
 * server, with only the address replaced by the test server's. Its configuration table names every
 * setting with the default the server uses, and its fixed limits are the code's.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_PARAM_LENGTH } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { HEAP_GROWING_PERCENT } from '../src/heap-growth.js'
import { IDEMPOTENCY_KEYS } from '../src/storage/jsonl/answer-memory.js'
import { SSE_MAX_BUFFERED_BYTES } from '../src/registry/registry-core.js'
import { LISTING_TEXT_MAX, MAX_TITLE_LENGTH } from '../src/session/listing-item.js'
import { MAX_JSON_DEPTH } from '../src/plugins/json-depth.js'
import { RESERVED_DESCRIPTORS } from '../src/http/descriptor-limit.js'
import { MIN_BODY_BYTES } from '../src/http/stalled-bodies.js'
import { startServer, type ServerProcess } from './helpers/server-process.js'

const README = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8')

/** The shell commands of the walk-through block, continuation lines joined, comments dropped. */
function walkThroughCommands (): string[] {
  const section = README.slice(README.indexOf('## Walk-through'))
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  return block.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'))
}

let server: ServerProcess
let dataDir: string
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ss-readme-'))
  server = await startServer({ DATA_DIR: dataDir })
})
afterAll(async () => {
  server.child.kill('SIGTERM')
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
})

describe('README walk-through', () => {
  it('creates, appends, reads the context and streams, as written', () => {
    const commands = walkThroughCommands()
    expect(commands).toHaveLength(5)
    const host = new URL(server.baseUrl).host
    const outputs = commands.map((command) => {
      const result = spawnSync('bash', ['-c', command.replaceAll('localhost:8787', host)], { encoding: 'utf8' })
      // curl exits 28 when --max-time ends the live stream; anything else non-zero is a failure.
      expect([0, 28]).toContain(result.status)
      return result.stdout
    })
    expect(JSON.parse(outputs[0]!)).toMatchObject({ header: { id: 'demo', title: 'Fix the flaky test' }, persisted: false })
    expect(JSON.parse(outputs[1]!)).toMatchObject({ firstSeq: 1, persisted: false })
    expect(JSON.parse(outputs[2]!)).toMatchObject({ firstSeq: 2, persisted: true })
    const context = JSON.parse(outputs[3]!)
    expect(context.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])
    expect(context.models).toEqual({ default: 'openai/gpt-4o' })
    expect(outputs[4]).toMatch(/^retry: 1000\n/)
    expect(outputs[4]).toContain('event: entry\nid: 2\n')
    expect(outputs[4]).not.toContain('id: 1\n')
  })
})

/** The cells of the README table row whose first cell starts with `first`. */
function row (first: string): string[] {
  const line = README.split('\n').find((l) => l.startsWith(`| ${first}`))
  return line === undefined ? [] : line.split(' | ').map((cell) => cell.replace(/^\| |\s\|$/g, ''))
}

/** `maxSsePerToken` → `MAX_SSE_PER_TOKEN`. */
const variableOf = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()

describe('README limits', () => {
  const open = loadConfig({}, '/')
  const tokened = loadConfig({ AUTH_TOKENS_FILE: 'tokens.json' }, '/')

  it('names every setting in the configuration table, with the numeric default the server uses', () => {
    for (const key of Object.keys(tokened) as Array<keyof typeof tokened>) {
      const variable = variableOf(key)
      const [, fallback] = row(`\`${variable}\``)
      expect(fallback, `${variable} has no row in the README's configuration table`).toBeDefined()
      if (typeof open[key] !== 'number') continue
      const figures = [...(fallback ?? '').matchAll(/`(\d+)`/g)].map((m) => Number(m[1]))
      const withTokens = (fallback ?? '').includes('with tokens')
      expect(figures[0], `${variable} default`).toBe(withTokens ? tokened[key] : open[key])
      expect(withTokens ? figures[1] : tokened[key], `${variable} default without tokens`).toBe(open[key])
    }
  })

  it('gives the fixed limits the values the code has', () => {
    const value = (first: string): number => Number(/`(\d+)`/.exec(row(first)[1] ?? '')?.[1])
    expect(value('title on create')).toBe(MAX_TITLE_LENGTH)
    expect(value('`firstMessage` and `title` in listings')).toBe(LISTING_TEXT_MAX)
    expect(value('nesting of a JSON')).toBe(MAX_JSON_DEPTH)
    expect(value('a path parameter')).toBe(MAX_PARAM_LENGTH)
    expect(value('unsent bytes of one live stream')).toBe(SSE_MAX_BUFFERED_BYTES)
    expect(value('`Idempotency-Key`s remembered')).toBe(IDEMPOTENCY_KEYS)
    expect(value('bytes a request body must bring')).toBe(MIN_BODY_BYTES)
    expect(value('file descriptors kept out')).toBe(RESERVED_DESCRIPTORS)
    expect(README.replace(/\s+/g, ' ')).toContain(`heap growing factor at ${1 + HEAP_GROWING_PERCENT / 100} `)
  })
})
