/**
 * Small statistics and formatting helpers shared by the benchmarks.
 */
import { readFileSync, writeFileSync } from 'node:fs'

/** The median (upper middle for an even count); NaN for no values. */
export function median (values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** The `p`-th percentile (0–100, nearest rank) of values already sorted ascending. */
export function percentileSorted (sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] as number
}

/** Fixed-point formatting; `—` for NaN. */
export function fmt (value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '—'
}

/** An integer with thousands separators (`12,345`). */
export function int (value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '—'
}

/** Bytes as MiB with one decimal. */
export function mib (bytes: number): string {
  return fmt(bytes / 2 ** 20)
}

/** `MET` / `NOT MET`. */
export function verdict (met: boolean): string {
  return met ? '**MET**' : '**NOT MET**'
}

/** A markdown table from a header row and body rows. Numeric-looking columns align right. */
export function table (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const align = header.map((_, i) => rows.every((r) => /^[-\d.,×%— ]+[a-zA-Z%/]*$/.test(r[i] ?? '')) ? '---:' : '---')
  return [
    `| ${header.join(' | ')} |`,
    `|${align.join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n')
}

/** Milliseconds since `start` (a `performance.now()` value). */
export function since (start: number): number {
  return performance.now() - start
}

/** Resolves after `ms` milliseconds. */
export function sleep (ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Replaces the section of `file` (a RESULTS.md) that starts with `heading`, up to the next `## `
 * heading, by `section`; appends it when there is none.
 */
export function writeSection (file: string, heading: string, section: string): void {
  const text = readFileSync(file, 'utf8')
  const start = text.indexOf(heading)
  if (start === -1) return writeFileSync(file, text.trimEnd() + '\n\n' + section)
  const next = text.indexOf('\n## ', start + heading.length)
  writeFileSync(file, text.slice(0, start) + section.trimEnd() + '\n' + (next === -1 ? '' : '\n' + text.slice(next + 1)))
}
