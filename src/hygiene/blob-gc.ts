/**
 * Blob collection of one tenant, mark and sweep. The mark reads every line of the tenant's
 * sessions that may spell a ref (`SessionStore.refLines`: saved and unsaved sessions, headers
 * included) and keeps every `sha256:<64 hex>` in them, whatever key holds it, also behind JSON
 * escapes: a line that merely mentions a hash keeps its blob, never the other way round. The sweep
 * then removes each blob that is not marked and was not put within the grace period before the
 * collection started.
 *
 * Why nothing referenced is lost: every write path puts the bytes of each ref it writes right
 * before the line (an append's images, an import, a fork's copy: SPEC.md §9.3), and a put marks
 * even stored bytes as put now (`BlobStore.put`). A line committed after the mark therefore
 * references a blob put less than a grace period ago, unless its write took longer than the
 * grace (one hour by default, far above REQUEST_TIMEOUT_MS). The removal rechecks that time
 * atomically with the puts of the same bytes (`BlobStore.remove`), so a put racing the sweep
 * keeps its blob, on any server.
 */
import type { BlobStore } from '../blobs/types.js'
import type { SessionStore } from '../storage/store.js'

/** What a collection found and did (`POST /v1/blobs/gc`). */
export interface GcReport {
  /** Blobs the tenant had when the sweep read them. */
  scanned: number
  /** Of them, referenced by a stored line. */
  referenced: number
  /** Not referenced, but put within the grace period (or put again during the sweep): kept. */
  keptYoung: number
  /** Removed (with a dry run: would have been). */
  deleted: number
  /** Bytes of the removed blobs. */
  bytesFreed: number
}

export interface CollectOptions {
  store: SessionStore
  blobs: BlobStore
  tenant: string
  /** Ms before the collection's start within which an unreferenced blob is kept. */
  graceMs: number
  /** Remove nothing; report what would go. */
  dryRun: boolean
}

/** Blobs removed per call of `BlobStore.remove`. */
const REMOVE_BATCH = 1000

const HASH_IN_TEXT = /sha256:([0-9a-f]{64})/g

function hashesIn (text: string, into: Set<string>): void {
  for (const match of text.matchAll(HASH_IN_TEXT)) into.add(match[1] as string)
}

/**
 * Adds every hash `line` may reference to `into`: those spelled in its text, and, when it holds a
 * JSON escape, those spelled by its decoded strings and keys (walked without recursion).
 */
export function addRefsOfLine (line: string, into: Set<string>): void {
  hashesIn(line, into)
  if (!line.includes('\\u')) return
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return
  }
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'string') hashesIn(v, into)
    else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        hashesIn(key, into)
        stack.push(item)
      }
    }
  }
}

/** Every hash the tenant's stored lines may reference. */
export async function markRefs (store: SessionStore, tenant: string): Promise<Set<string>> {
  const refs = new Set<string>()
  for await (const line of store.refLines(tenant)) addRefsOfLine(line, refs)
  return refs
}

/** One mark and sweep of `tenant`'s blobs. */
export async function collectBlobs (options: CollectOptions): Promise<GcReport> {
  const { store, blobs, tenant, graceMs, dryRun } = options
  const keepFrom = Date.now() - graceMs
  const refs = await markRefs(store, tenant)
  const report: GcReport = { scanned: 0, referenced: 0, keptYoung: 0, deleted: 0, bytesFreed: 0 }
  let batch: string[] = []
  const sweep = async (): Promise<void> => {
    const removed = await blobs.remove(batch, keepFrom)
    report.deleted += removed.length
    report.keptYoung += batch.length - removed.length
    for (const r of removed) report.bytesFreed += r.size
    batch = []
  }
  for await (const blob of blobs.scan()) {
    report.scanned++
    if (refs.has(blob.hash)) report.referenced++
    else if (blob.touchedMs >= keepFrom) report.keptYoung++
    else if (dryRun) {
      report.deleted++
      report.bytesFreed += blob.size
    } else {
      batch.push(blob.hash)
      if (batch.length >= REMOVE_BATCH) await sweep()
    }
  }
  if (batch.length > 0) await sweep()
  return report
}
