/**
 * How far the JavaScript heap may grow past what the last full collection kept alive. V8 picks
 * that factor itself, up to 4× on a machine with a few GiB: a server holding 300 MiB of session
 * data could then carry up to 900 MiB of garbage before it collects, so its memory would depend on
 * V8's mood rather than on the limits. Fixed at 1 + HEAP_GROWING_PERCENT / 100, the heap stays
 * within that factor of the live data, which the limits bound (README "Memory"); the price is
 * more frequent full collections when much of the heap is live.
 *
 * One case is known ahead: a session file being loaded becomes live data, about as many heap
 * bytes as it has bytes. Collecting every 1.5× on the way there marks the same growing records
 * again and again, and a cold open of a 100 MB file spends a good part of its time doing so.
 * While loads are in progress (`expectLoad`), the factor lets the heap grow by the records of
 * what they have still to read (`HEAP_BYTES_PER_FILE_BYTE`), so the heap stays within the live
 * data plus the unread rest of the loads, which becomes live anyway; each chunk read lowers it,
 * and the fixed factor is back once the loads are done.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'

/** The heap may grow this many percent past the live data before a full collection. */
export const HEAP_GROWING_PERCENT = 50

/**
 * Heap bytes the records of one byte of a session file take once parsed: a 100 MB file of 2 KB
 * message entries leaves about 1.2 bytes per byte in the old generation.
 */
const HEAP_BYTES_PER_FILE_BYTE = 1.25

/** Heap in use is taken as at least this many bytes, so that a tiny heap asks for no absurd factor. */
const MIN_HEAP_BYTES = 8 * 1024 * 1024

/** The factor is set again only when it moves by this many percent (a flag parse per change). */
const PERCENT_STEP = 10

/** The fixed factor is in force (set by `boundHeapGrowth`, not by the node command line). */
let bounded = false
/** The percent last set. */
let current = HEAP_GROWING_PERCENT
/** Bytes that loads in progress have still to read. */
let unread = 0

/**
 * Sets V8's heap growing factor for this process, unless the node command line already chose one
 * (`node --heap-growing-percent=N`). True when it set it.
 */
export function boundHeapGrowth (execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))) return false
  setPercent(HEAP_GROWING_PERCENT)
  bounded = true
  return true
}

/**
 * The growing percent while loads have `unreadBytes` still to read over `heapBytes` in use: room
 * for the records of the unread bytes, never less than the fixed percent. A collection then sets
 * the next limit at most that room past the live data, since what is live is part of what is in use.
 */
export function loadingGrowthPercent (unreadBytes: number, heapBytes: number): number {
  const room = (100 * HEAP_BYTES_PER_FILE_BYTE * unreadBytes) / Math.max(MIN_HEAP_BYTES, heapBytes)
  return Math.max(HEAP_GROWING_PERCENT, Math.ceil(room / PERCENT_STEP) * PERCENT_STEP)
}

/** A load in progress: `read(bytes)` as it reads, `done()` once (also when it fails). */
export interface LoadGrowth {
  read: (bytes: number) => void
  done: () => void
}

/**
 * Announces the load of a file of `bytes` into memory. Does nothing unless `boundHeapGrowth`
 * fixed the factor.
 */
export function expectLoad (bytes: number): LoadGrowth {
  let left = bounded ? Math.max(0, bytes) : 0
  const take = (n: number): void => {
    if (left === 0) return
    const taken = Math.min(left, Math.max(0, n))
    left -= taken
    unread -= taken
    adjust()
  }
  unread += left
  adjust()
  return { read: take, done: () => { take(left) } }
}

function adjust (): void {
  if (!bounded) return
  const percent = unread === 0 ? HEAP_GROWING_PERCENT : loadingGrowthPercent(unread, oldGenerationBytes())
  if (percent !== current) setPercent(percent)
}

/**
 * Heap bytes in use outside the young generation. V8 multiplies the factor with what a full
 * collection leaves, all of it old; young objects counted there too would shrink the room a
 * load is given (a load's records pass through the young generation by the megabyte).
 */
function oldGenerationBytes (): number {
  let bytes = 0
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name !== 'new_space' && space.space_name !== 'new_large_object_space') bytes += space.space_used_size
  }
  return bytes
}

function setPercent (percent: number): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`)
  current = percent
}
