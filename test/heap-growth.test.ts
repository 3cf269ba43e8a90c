/**
 * The server fixes V8's heap growing factor (src/heap-growth.ts), so that its heap stays within
 * a known factor of the live data. Checked in a child process that V8 traces: after a full
 * collection it sets the heap's next limit with the factor asked for, where it would otherwise
 * choose its own; a factor given on the node command line is left alone.
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from '../src/heap-growth.js'

const MODULE = join(import.meta.dirname, '..', 'src', 'heap-growth.ts')

/** The factors V8 reports for the old generation's new limits, in a child that keeps 20 MB live. */
function limitFactors (bound: boolean, nodeArgs: string[] = []): number[] {
  const script = `
    const { boundHeapGrowth } = await import(${JSON.stringify(MODULE)})
    if (${bound}) boundHeapGrowth()
    const keep = Array.from({ length: 200 }, (_, i) => 'x'.repeat(100000) + i)
    globalThis.gc()
    process.stdout.write(String(keep.length) + '\\n')`
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', '--trace-gc-verbose', ...nodeArgs, '--input-type=module', '-e', script], { encoding: 'utf8' })
  expect(child.status, child.stderr).toBe(0)
  return [...child.stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)/g)].map((m) => Number(m[1]))
}

describe('heap growth', () => {
  it(`makes V8 grow the heap by ${HEAP_GROWING_PERCENT} % past the live data, where it would choose its own factor`, () => {
    const own = limitFactors(false)
    expect(own.length).toBeGreaterThan(0)
    expect(own).not.toContain(1 + HEAP_GROWING_PERCENT / 100)
    const fixed = limitFactors(true)
    expect(fixed.length).toBeGreaterThan(0)
    expect(new Set(fixed)).toEqual(new Set([1 + HEAP_GROWING_PERCENT / 100]))
  })

  it('leaves a factor given on the node command line alone', () => {
    expect(boundHeapGrowth(['--heap-growing-percent=20'])).toBe(false)
    expect(new Set(limitFactors(true, ['--heap-growing-percent=20']))).toEqual(new Set([1.2]))
  })
})
