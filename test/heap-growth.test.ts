/**
 * The server fixes V8's heap growing factor (src/heap-growth.ts), so that its heap stays within
 * a known factor of the live data. Checked in a child process that V8 traces: after a full
 * collection it sets the heap's next limit with the factor asked for, where it would otherwise
 * choose its own; a factor given on the node command line is left alone.
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boundHeapGrowth, HEAP_GROWING_PERCENT, loadingGrowthPercent } from '../src/heap-growth.js'

const MODULE = join(import.meta.dirname, '..', 'src', 'heap-growth.ts')

/**
 * The factors V8 reports for the old generation's new limits, in a child that keeps 20 MB live;
 * with `loading`, while a load of that many more bytes is announced and nothing of it is read yet.
 */
function limitFactors (bound: boolean, nodeArgs: string[] = [], loading = 0, youngBytes = 0): number[] {
  const script = `
    const { boundHeapGrowth, expectLoad } = await import(${JSON.stringify(MODULE)})
    if (${bound}) boundHeapGrowth()
    const keep = Array.from({ length: 200 }, (_, i) => 'x'.repeat(100000) + i)
    globalThis.gc()
    // Small objects still in the young generation when the load is announced.
    const young = Array.from({ length: ${youngBytes} / 64 }, (_, i) => ({ a: i, b: i + 1, c: [i] }))
    if (${loading} > 0) expectLoad(${loading})
    keep.push(young)
    globalThis.gc()
    process.stdout.write(String(keep.length) + '\\n')`
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', '--trace-gc-verbose', ...nodeArgs, '--input-type=module', '-e', script], { encoding: 'utf8' })
  expect(child.status, child.stderr).toBe(0)
  return [...child.stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)/g)].map((m) => Number(m[1]))
}

describe('heap growth', () => {
  it(`makes V8 grow the heap by ${HEAP_GROWING_PERCENT} % past the live data, where it would choose its own factor`, () => {
    // V8's own factor follows its measured collection and mutator speeds (printed to one
    // decimal, so one of them may happen to read as the fixed one); never all of them.
    const own = limitFactors(false)
    expect(own.length).toBeGreaterThan(0)
    expect(new Set(own)).not.toEqual(new Set([1 + HEAP_GROWING_PERCENT / 100]))
    const fixed = limitFactors(true)
    expect(fixed.length).toBeGreaterThan(0)
    expect(new Set(fixed)).toEqual(new Set([1 + HEAP_GROWING_PERCENT / 100]))
  })

  it('leaves a factor given on the node command line alone', () => {
    expect(boundHeapGrowth(['--heap-growing-percent=20'])).toBe(false)
    expect(new Set(limitFactors(true, ['--heap-growing-percent=20']))).toEqual(new Set([1.2]))
    expect(new Set(limitFactors(true, ['--heap-growing-percent=20'], 100_000_000))).toEqual(new Set([1.2]))
  })

  it('lets the heap grow by the records of what a load in progress has still to read', () => {
    const used = 40_000_000
    expect(loadingGrowthPercent(0, used)).toBe(HEAP_GROWING_PERCENT)
    expect(loadingGrowthPercent(used / 100, used)).toBe(HEAP_GROWING_PERCENT)
    expect(loadingGrowthPercent(used, used)).toBe(130) // 125 % of the unread bytes, in steps of 10
    expect(loadingGrowthPercent(4 * used, used)).toBe(500)
    expect(loadingGrowthPercent(used, 1000)).toBe(loadingGrowthPercent(used, 8 * 1024 * 1024)) // a tiny heap counts as 8 MiB
  })

  it('gives a load the same room whatever young objects are in use when it starts', () => {
    // V8 multiplies the factor with what a full collection keeps, all of it old: young objects
    // counted in the heap the room is set against would shrink it.
    const args = ['--min-semi-space-size=16']
    const without = limitFactors(true, args, 40_000_000)
    const withYoung = limitFactors(true, args, 40_000_000, 8_000_000)
    expect(Math.max(...without)).toBeGreaterThanOrEqual(3.5)
    expect(Math.max(...withYoung)).toBe(Math.max(...without))
  })

  it('applies that factor while a load is announced, and the fixed one again once it is done', () => {
    // 40 MB still to read over at most ~20 MB in use: the next limit leaves room for their
    // records (a factor of 3.5 or more), not 1.5
    const loading = limitFactors(true, [], 40_000_000)
    expect(loading.length).toBeGreaterThan(0)
    expect(Math.max(...loading)).toBeGreaterThanOrEqual(3.5)
    const script = `
      const { boundHeapGrowth, expectLoad } = await import(${JSON.stringify(MODULE)})
      boundHeapGrowth()
      const keep = Array.from({ length: 200 }, (_, i) => 'x'.repeat(100000) + i)
      const load = expectLoad(40_000_000)
      load.read(40_000_000)
      load.done()
      globalThis.gc()
      process.stdout.write(String(keep.length) + '\\n')`
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', '--trace-gc-verbose', '--input-type=module', '-e', script], { encoding: 'utf8' })
    expect(child.status, child.stderr).toBe(0)
    const after = [...child.stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)/g)].map((m) => Number(m[1]))
    expect(new Set(after)).toEqual(new Set([1 + HEAP_GROWING_PERCENT / 100]))
  })
})
