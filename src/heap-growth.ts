/**
 * How far the JavaScript heap may grow past what the last full collection kept alive. V8 picks
 * that factor itself, up to 4× on a machine with a few GiB: a server holding 300 MiB of session
 * data could then carry up to 900 MiB of garbage before it collects, so its memory would depend on
 * V8's mood rather than on the limits. Fixed at 1 + HEAP_GROWING_PERCENT / 100, the heap stays
 * within that factor of the live data, which the limits bound (README "Memory"); the price is
 * more frequent full collections when much of the heap is live.
 */
import { setFlagsFromString } from 'node:v8'

/** The heap may grow this many percent past the live data before a full collection. */
export const HEAP_GROWING_PERCENT = 50

/**
 * Sets V8's heap growing factor for this process, unless the node command line already chose one
 * (`node --heap-growing-percent=N`). True when it set it.
 */
export function boundHeapGrowth (execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))) return false
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
  return true
}
