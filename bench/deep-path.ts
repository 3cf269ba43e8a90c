/**
 * Deep paths: a linear chain of N entries through the SessionManager, then the context, the
 * branch (path) and the tree of its leaf. Walks are iterative, so nothing overflows the stack, and
 * they are linear: doubling N should roughly double the time, not quadruple it.
 * Run: npx tsx bench/deep-path.ts [N]
 */
import { performance } from 'node:perf_hooks'
import { SessionManager } from '../src/session/session-manager.js'
import { MemorySessionStorage } from '../src/storage/memory-session-storage.js'

export interface DeepPathResult { entries: number, appendMs: number, contextMs: number, branchMs: number, treeMs: number }

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
  if (context.messages.length !== n || branch.length !== n || tree.length !== 1) {
    throw new Error(`wrong result: ${context.messages.length} messages, ${branch.length} path entries, ${tree.length} roots`)
  }
  return { entries: n, appendMs, contextMs, branchMs, treeMs }
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
    }
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 100_000)
  console.table(deepPathTable([n / 2, n]))
}
