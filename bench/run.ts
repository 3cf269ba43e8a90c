/**
 * `npm run bench`: runs every benchmark and rewrites bench/RESULTS.md with medians of 3 runs.
 */
import { writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { deepPathTable } from './deep-path.js'

const fmt = (ms: number): string => ms.toFixed(1)

function machine (): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  return `${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`
}

function deepPathSection (): string {
  const rows = deepPathTable([50_000, 100_000], 3)
  const [half, full] = rows as [typeof rows[0], typeof rows[0]]
  const lines = [
    '## Deep paths (session model, in memory)',
    '',
    'A linear chain of N message entries. Median of 3 runs, milliseconds. Walks are iterative; the',
    'line below gives the 100k/50k time ratios (2 means linear, 4 quadratic).',
    '',
    '| entries | append all | buildSessionContext | getBranch | getTree |',
    '|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.entries} | ${fmt(r.appendMs)} | ${fmt(r.contextMs)} | ${fmt(r.branchMs)} | ${fmt(r.treeMs)} |`),
    '',
    `Scaling 50k → 100k: context ×${(full.contextMs / half.contextMs).toFixed(2)}, branch ×${(full.branchMs / half.branchMs).toFixed(2)}, tree ×${(full.treeMs / half.treeMs).toFixed(2)}.`,
  ]
  return lines.join('\n')
}

const sections = [deepPathSection()]
const doc = ['# Benchmark results', '', `Machine: ${machine()}`, '', ...sections, ''].join('\n')
writeFileSync(join(import.meta.dirname, 'RESULTS.md'), doc)
console.log(doc)
