/**
 * Brings the index of the JSONL store up to date with the files, once at start: what an agent
 * wrote into DATA_DIR while no server ran, or what a crash left the index behind on. Every
 * session file of every tenant is looked at (`*.jsonl` in `sessions/<dir>/`, directories starting
 * with `.` skipped); only a file whose size or mtime moved past what the index holds is read.
 * With an index that is missing or was damaged, that is every file, read once.
 */
import { basename, join } from 'node:path'
import { TENANT_RE } from '../../auth/tokens.js'
import { listingItemOf } from '../../session/listing-item.js'
import type { Logger } from '../../session/logger.js'
import { parseJsonlLenient } from '../../session/parser.js'
import { PREFIX_READ_BYTES } from '../../session/types.js'
import { tenantRoot } from '../paths.js'
import { SessionPrefix } from '../session-head.js'
import type { SessionStorage } from '../types.js'
import type { IndexRow, ListingIndex } from './listing-index.js'

/** A file whose mtime is at most this far past its last check counts as unchanged (clock and file-system granularity). */
const MTIME_SLACK_MS = 2000
/** Files looked at between two turns of the event loop, so the server answers meanwhile. */
const BATCH = 500
/** Changed files read at once. */
const READ_CONCURRENCY = 32

export interface ReconcileContext {
  storage: SessionStorage
  index: ListingIndex
  dataDir: string
  log: Logger
  nextVersion(): number
  rel(path: string): string
}

interface Found { tenant: string, path: string, mtimeMs: number, size: number }

const turn = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

/** Every tenant root of `dataDir`: the default tenant's, then `tenants/<name>` for each tenant name. */
export function tenantRoots (storage: SessionStorage, dataDir: string): Array<{ tenant: string, root: string }> {
  const roots = [{ tenant: 'default', root: dataDir }]
  for (const dir of storage.listDirsSync(join(dataDir, 'tenants'))) {
    const name = basename(dir)
    if (TENANT_RE.test(name) && name !== 'default') roots.push({ tenant: name, root: tenantRoot(dataDir, name) })
  }
  return roots
}

/** Every session file of `root`, in `sessions/<dir>/*.jsonl`. */
export function sessionFiles (storage: SessionStorage, root: string): string[] {
  const files: string[] = []
  for (const dir of storage.listDirsSync(join(root, 'sessions'))) {
    if (basename(dir).startsWith('.')) continue
    for (const path of storage.listFilesSync(dir, '*.jsonl')) if (path.endsWith('.jsonl')) files.push(path)
  }
  return files
}

export async function reconcile (ctx: ReconcileContext): Promise<void> {
  const started = Date.now()
  const { storage, index } = ctx
  const known = new Map(index.files().map((row) => [row.path, row]))
  const changed: Found[] = []
  let looked = 0
  for (const { tenant, root } of tenantRoots(storage, ctx.dataDir)) {
    for (const path of sessionFiles(storage, root)) {
      if (++looked % BATCH === 0) await turn()
      const rel = ctx.rel(path)
      const row = known.get(rel)
      known.delete(rel)
      try {
        const { size, mtimeMs } = storage.statSync(path)
        if (row !== undefined && row.size === size && mtimeMs <= row.checked + MTIME_SLACK_MS) continue
        changed.push({ tenant, path, mtimeMs, size })
      } catch {
        // Gone since it was listed.
      }
    }
  }
  let next = 0
  const worker = async (): Promise<void> => {
    for (let i = next++; i < changed.length; i = next++) {
      if (i > 0 && i % 10_000 === 0) ctx.log.info({ read: i, of: changed.length }, 'reading changed session files into the index')
      await indexFile(ctx, changed[i] as Found)
    }
  }
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, changed.length) }, worker))
  // Files gone (an agent deleted them, or moved them: then they were found above, under their new path).
  for (const row of known.values()) {
    if (index.get(row.tenant, row.id)?.path === row.path) index.delete(row.tenant, row.id)
  }
  index.flush()
  ctx.log.info({ files: looked, read: changed.length, removed: known.size, ms: Date.now() - started }, 'session index checked against the files')
}

/** Indexes one file from its content; of two files of one id, the one changed last wins. */
async function indexFile (ctx: ReconcileContext, found: Found): Promise<void> {
  let text: string
  try {
    text = await ctx.storage.readText(found.path)
  } catch {
    return
  }
  const records = parseJsonlLenient(text)
  const item = listingItemOf(records, ctx.dataDir, found.mtimeMs)
  if (item === undefined) return
  const rel = ctx.rel(found.path)
  const other = ctx.index.get(found.tenant, item.id)
  if (other !== undefined && other.path !== rel && other.saved && other.modified > found.mtimeMs && ctx.storage.existsSync(join(ctx.dataDir, other.path))) {
    ctx.log.warn({ sessionId: item.id, kept: other.path, ignored: rel }, 'Two session files share one id')
    return
  }
  const row: IndexRow = {
    tenant: found.tenant,
    id: item.id,
    path: rel,
    saved: true,
    version: ctx.nextVersion(),
    modified: found.mtimeMs,
    item,
    recent: new SessionPrefix(text.slice(0, PREFIX_READ_BYTES * 2), found.path).name(),
    size: found.size,
    checked: Date.now(),
  }
  ctx.index.put(row)
}
