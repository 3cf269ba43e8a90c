/**
 * Deep paths (target 5): a linear chain of N entries through the SessionManager, then the
 * context, the branch (path) and the tree of its leaf. Walks are iterative, so nothing overflows
 * the stack, and they are linear: doubling N should roughly double the time, not quadruple it.
 * `measureDeepHttp` then serves a 100,000-entry chain from the real server.
 * Run: npx tsx bench/deep-path.ts [N]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { SessionManager } from '../src/session/session-manager.js'
import { MemorySessionStorage } from '../src/storage/memory-session-storage.js'
import { writeDeepSession } from './lib/generate.js'
import { startOurServer } from './lib/processes.js'

export interface DeepPathResult { entries: number, appendMs: number, contextMs: number, branchMs: number, treeMs: number, flatTreeMs: number }

function time<T> (fn: () => T): [T, number] {
  const start = performance.now()
  const value = fn()
  return [value, performance.now() - start]
}

export function measureDeepPath (n: number): DeepPathResult {
  const m = SessionManager.inMemory('/bench', new MemorySessionStorage())
  const [, appendMs] = time(() => {
    for (let i = 0; i < n; i++) {
      if (i % 2 === 0) m.appendMessage({ role: 'user', content: `u${i}`, timestamp: i })
      else m.appendMessage({ role: 'assistant', content: [{ type: 'text', text: `a${i}` }], provider: 'p', model: 'm', timestamp: i })
    }
  })
  const [context, contextMs] = time(() => m.buildSessionContext())
  const [branch, branchMs] = time(() => m.getBranch())
  const [tree, treeMs] = time(() => m.getTree())
  const [flat, flatTreeMs] = time(() => m.getFlatTree())
  if (context.messages.length !== n || branch.length !== n || tree.length !== 1 || flat.length !== n) {
    throw new Error(`wrong result: ${context.messages.length} messages, ${branch.length} path entries, ${tree.length} roots, ${flat.length} nodes`)
  }
  return { entries: n, appendMs, contextMs, branchMs, treeMs, flatTreeMs }
}

export function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** Median of `runs` measurements for each N. */
export function deepPathTable (sizes: number[], runs = 3): DeepPathResult[] {
  return sizes.map((n) => {
    const results = Array.from({ length: runs }, () => measureDeepPath(n))
    return {
      entries: n,
      appendMs: median(results.map((r) => r.appendMs)),
      contextMs: median(results.map((r) => r.contextMs)),
      branchMs: median(results.map((r) => r.branchMs)),
      treeMs: median(results.map((r) => r.treeMs)),
      flatTreeMs: median(results.map((r) => r.flatTreeMs)),
    }
  })
}

export interface DeepHttpResult {
  entries: number
  /** First request, which loads the session from disk. */
  coldContextMs: number
  /** Warm requests: ms each, status, answer bytes, and the count the answer holds. */
  context: Array<{ ms: number, status: number, bytes: number, count: number }>
  tree: Array<{ ms: number, status: number, bytes: number, count: number }>
}

async function timedJson (url: string, count: (body: Record<string, unknown[]>) => number): Promise<{ ms: number, status: number, bytes: number, count: number }> {
  const start = performance.now()
  const res = await fetch(url)
  const text = await res.text()
  const ms = performance.now() - start
  return { ms, status: res.status, bytes: Buffer.byteLength(text), count: res.status === 200 ? count(JSON.parse(text) as Record<string, unknown[]>) : -1 }
}

/** A generated `n`-entry chain served by the real server: GET context (cold, then warm) and tree. */
export async function measureDeepHttp (n = 100_000, runs = 3): Promise<DeepHttpResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-deep-'))
  try {
    const { id } = writeDeepSession(dataDir, n)
    const server = await startOurServer(dataDir)
    try {
      const url = `${server.baseUrl}/v1/sessions/${id}`
      const messages = (b: Record<string, unknown[]>): number => b.messages?.length ?? -1
      const nodes = (b: Record<string, unknown[]>): number => b.nodes?.length ?? -1
      const cold = await timedJson(`${url}/context`, messages)
      const context = []
      const tree = []
      for (let i = 0; i < runs; i++) {
        context.push(await timedJson(`${url}/context`, messages))
        tree.push(await timedJson(`${url}/tree`, nodes))
      }
      return { entries: n, coldContextMs: cold.ms, context, tree }
    } finally {
      await server.stop()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const fmt = (ms: number): string => ms.toFixed(1)
const verdictOf = (met: boolean): string => met ? '**MET**' : '**NOT MET**'

/** The RESULTS.md section: the in-memory table (median of `runs`) and the HTTP part. */
export function deepPathSection (rows: DeepPathResult[], http: DeepHttpResult): string {
  const half = rows[0] as DeepPathResult
  const full = rows[rows.length - 1] as DeepPathResult
  const ctx = median(http.context.map((r) => r.ms))
  const tree = median(http.tree.map((r) => r.ms))
  const served = [...http.context, ...http.tree].every((r) => r.status === 200 && r.count === http.entries)
  const count = http.entries.toLocaleString('en-US')
  return [
    '## Deep paths (target 5)',
    '',
    'A linear chain of N message entries through the session model in memory. Median of 3 runs, milliseconds. Walks are',
    'iterative; the line below gives the 100k/50k time ratios (2 means linear, 4 quadratic). `flatTree` is what',
    '`GET /tree` serves (flat nodes with child ids); `getTree` is the nested SessionManager form.',
    '',
    '| entries | append all | buildSessionContext | getBranch | getTree | flatTree |',
    '|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.entries} | ${fmt(r.appendMs)} | ${fmt(r.contextMs)} | ${fmt(r.branchMs)} | ${fmt(r.treeMs)} | ${fmt(r.flatTreeMs)} |`),
    '',
    `Scaling ${half.entries.toLocaleString('en-US')} → ${full.entries.toLocaleString('en-US')} entries: context ×${(full.contextMs / half.contextMs).toFixed(2)}, branch ×${(full.branchMs / half.branchMs).toFixed(2)}, tree ×${(full.treeMs / half.treeMs).toFixed(2)}, flatTree ×${(full.flatTreeMs / half.flatTreeMs).toFixed(2)}.`,
    '',
    `Over HTTP: a ${http.entries.toLocaleString('en-US')}-entry chain (\`bench/lib/generate.ts\`) in a temp DATA_DIR, served by the real server. The first`,
    `\`GET /context\` (which loads the file) took ${fmt(http.coldContextMs)} ms; then ${http.context.length} warm requests each, request to last byte`,
    '(building, serializing and sending the answer):',
    '',
    '| route | ms (median) | per request | status | answer MiB | items in the answer |',
    '|---|---:|---|---|---:|---:|',
    `| GET /context | ${fmt(ctx)} | ${http.context.map((r) => fmt(r.ms)).join(' / ')} | ${[...new Set(http.context.map((r) => r.status))].join(', ')} | ${fmt((http.context[0]?.bytes ?? 0) / 2 ** 20)} | ${http.context[0]?.count ?? 0} messages |`,
    `| GET /tree | ${fmt(tree)} | ${http.tree.map((r) => fmt(r.ms)).join(' / ')} | ${[...new Set(http.tree.map((r) => r.status))].join(', ')} | ${fmt((http.tree[0]?.bytes ?? 0) / 2 ** 20)} | ${http.tree[0]?.count ?? 0} nodes |`,
    '',
    '| target | measured | verdict |',
    '|---|---|---|',
    `| context built ≤ 150 ms (${full.entries.toLocaleString('en-US')}) | ${fmt(full.contextMs)} ms | ${verdictOf(full.contextMs <= 150)} |`,
    `| tree built ≤ 300 ms (${full.entries.toLocaleString('en-US')}) | getTree ${fmt(full.treeMs)} ms, flatTree ${fmt(full.flatTreeMs)} ms | ${verdictOf(Math.max(full.treeMs, full.flatTreeMs) <= 300)} |`,
    `| GET /context over HTTP ≤ 1 s (${count}, warm, median) | ${fmt(ctx)} ms | ${verdictOf(ctx <= 1000)} |`,
    `| GET /tree over HTTP ≤ 1 s (${count}, warm, median) | ${fmt(tree)} ms | ${verdictOf(tree <= 1000)} |`,
    `| both served over HTTP without error | ${served ? `every answer 200 with all ${count} items` : 'no'} | ${verdictOf(served)} |`,
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 100_000)
  console.log(deepPathSection(deepPathTable([n / 2, n]), await measureDeepHttp(n)))
}
