/**
 * Brings the index of the JSONL store up to date with the files, once at start: what an agent
 * wrote into DATA_DIR while no server ran, or what a crash left the index behind on. Session
 * files are `*.jsonl` in `sessions/<dir>/` of every tenant (directories starting with `.`
 * skipped); only a file whose size or mtime moved past what the index holds is read. With an
 * index that is missing or was damaged, that is every file, read once.
 *
 * After a clean stop (`since`: when the index was closed) only the directories that changed
 * since are looked into: those whose mtime moved (a file made, removed or renamed in them) and
 * those the index knows no file of (made or renamed meanwhile). A crash leaves no such mark, and
 * the next start looks at every file. An agent's append to a file while no server ran is found
 * when the session is next loaded (jsonl-store.ts). In the directories looked into, the temp
 * files of rewrites that a crash cut short are deleted.
 */
import { basename, dirname, join } from 'node:path'
import { TENANT_RE } from '../../auth/tokens.js'
import type { Logger } from '../../session/logger.js'
import { PREFIX_READ_BYTES } from '../../session/types.js'
import { tenantRoot } from '../paths.js'
import { SessionPrefix } from '../session-head.js'
import type { SessionStorage } from '../types.js'
import { LineReader, ListingScan, WHOLE_FILE_BYTES } from './file-scan.js'
import type { IndexRow, ListingIndex } from './listing-index.js'
import type { SearchIndex } from './search-index.js'
import { BACKLOG_CHARS, type SearchBackfill } from './search-feed.js'

/** A file whose mtime is at most this far past its last check counts as unchanged (clock and file-system granularity). */
const MTIME_SLACK_MS = 2000
/** Files looked at between two turns of the event loop, so the server answers meanwhile. */
const BATCH = 500
/** Changed files read at once. */
const READ_CONCURRENCY = 32

export interface ReconcileContext {
  storage: SessionStorage
  index: ListingIndex
  search: SearchIndex
  /** Files whose lines the search index is to read. */
  backfill: SearchBackfill
  dataDir: string
  log: Logger
  nextVersion(): number
  rel(path: string): string
  abs(rel: string): string
}

/** A session file to index: its tenant, absolute path, mtime and size. */
export interface Found { tenant: string, path: string, mtimeMs: number, size: number }

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

/** Every session directory of `root` (`sessions/<dir>`, not starting with `.`). */
export function sessionDirs (storage: SessionStorage, root: string): string[] {
  return storage.listDirsSync(join(root, 'sessions')).filter((dir) => !basename(dir).startsWith('.'))
}

/** A rewrite's temp file (write-queue.ts `tempPathFor`), left behind when the server died mid-rewrite. */
const REWRITE_TEMP = /^\..+\.jsonl\.[0-9a-f]{16}\.tmp$/

/**
 * The session files of `dir` (`*.jsonl`); rewrites' temp files made before `before` (epoch ms),
 * which a server that died mid-rewrite left, go to `stale`.
 */
function filesOf (storage: SessionStorage, dir: string, before: number, stale: string[]): string[] {
  const files: string[] = []
  for (const path of storage.listFilesSync(dir, '*')) {
    if (path.endsWith('.jsonl')) files.push(path)
    else if (REWRITE_TEMP.test(basename(path)) && modifiedBefore(storage, path, before)) stale.push(path)
  }
  return files
}

function modifiedBefore (storage: SessionStorage, path: string, before: number): boolean {
  try {
    return storage.statSync(path).mtimeMs < before
  } catch {
    return false
  }
}

/** Deletes the temp files of rewrites cut short by a stop. */
async function removeStale (ctx: ReconcileContext, stale: readonly string[]): Promise<void> {
  for (const path of stale) {
    await ctx.storage.unlink(path).then(() => { ctx.log.info({ file: ctx.rel(path) }, 'Deleted the temp file of a rewrite that a stop cut short') }, () => {})
  }
}

/** False when `dir` did not change since `since` (epoch ms) and the index knows files in it. */
function mayHaveChanged (storage: SessionStorage, dir: string, since: number | undefined, knownDirs: ReadonlySet<string>): boolean {
  if (since === undefined || !knownDirs.has(dir)) return true
  try {
    return storage.statSync(dir).mtimeMs >= since - MTIME_SLACK_MS
  } catch {
    return true
  }
}

/**
 * Checks the index against the files (every one, or after a clean stop those of the directories
 * changed `since`); stops early when `stopped()` says so, keeping what it checked. Resolves true
 * when it checked everything.
 */
export async function reconcile (ctx: ReconcileContext, since: number | undefined, stopped: () => boolean): Promise<boolean> {
  const started = Date.now()
  const { storage, index } = ctx
  const known = new Map(index.files().map((row) => [row.path, row]))
  const knownDirs = new Set([...known.keys()].map((rel) => dirname(ctx.abs(rel))))
  const changed: Found[] = []
  const stale: string[] = []
  /** Directories left as they were since the clean stop: their files are where the index says. */
  const unchanged = new Set<string>()
  let looked = 0
  for (const { tenant, root } of tenantRoots(storage, ctx.dataDir)) {
    for (const dir of sessionDirs(storage, root)) {
      if (!mayHaveChanged(storage, dir, since, knownDirs)) {
        unchanged.add(dir)
        continue
      }
      if (stopped()) return false
      for (const path of filesOf(storage, dir, started, stale)) {
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
  }
  await removeStale(ctx, stale)
  // Only files of the directories looked into (or gone) can be gone.
  for (const rel of known.keys()) if (unchanged.has(dirname(ctx.abs(rel)))) known.delete(rel)
  let next = 0
  const worker = async (): Promise<void> => {
    for (let i = next++; i < changed.length && !stopped(); i = next++) {
      if (i > 0 && i % 10_000 === 0) ctx.log.info({ read: i, of: changed.length }, 'reading changed session files into the index')
      await indexFile(ctx, changed[i] as Found)
    }
  }
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, changed.length) }, worker))
  if (stopped()) return false
  // Files gone (an agent deleted them, or moved them: then they were found above, under their new path).
  for (const row of known.values()) {
    if (index.get(row.tenant, row.id)?.path === row.path) {
      index.delete(row.tenant, row.id)
      ctx.search.remove(row.tenant, row.id)
    }
  }
  index.flush()
  ctx.log.info({ files: looked, read: changed.length, removed: known.size, ms: Date.now() - started, full: since === undefined }, 'session index checked against the files')
  return true
}

/**
 * Indexes one file from its content, read a piece at a time (file-scan.ts), and hands its lines
 * to the search index; of two files of one id, the one changed last wins.
 */
export async function indexFile (ctx: ReconcileContext, found: Found): Promise<void> {
  const reader = new LineReader(ctx.storage, found.path, PREFIX_READ_BYTES * 2, found.size)
  const scan = new ListingScan()
  // A small file's lines go to the search index as read; a large one's are read again, a piece at a time.
  let lines: string[] | undefined = found.size <= WHOLE_FILE_BYTES ? [] : undefined
  try {
    for await (const piece of reader.pieces()) {
      for (const line of piece) scan.line(line)
      lines = lines?.concat(piece)
    }
  } catch {
    return
  }
  const item = scan.item(ctx.dataDir, found.mtimeMs)
  if (item === undefined) return
  if (losesTo(ctx, found, item.id)) {
    ctx.log.warn({ sessionId: item.id, kept: ctx.index.get(found.tenant, item.id)?.path, ignored: ctx.rel(found.path) }, 'Two session files share one id')
    return
  }
  const row: IndexRow = {
    tenant: found.tenant,
    id: item.id,
    path: ctx.rel(found.path),
    saved: true,
    version: ctx.nextVersion(),
    modified: found.mtimeMs,
    item,
    recent: new SessionPrefix(reader.prefix, found.path).name(),
    size: found.size,
    checked: Date.now(),
  }
  ctx.index.put(row)
  // With much waiting to be indexed (a first start reads every file), the file is read again later
  // instead of held: the check goes on at its own pace, in bounded memory.
  if (lines !== undefined && ctx.search.pendingChars <= BACKLOG_CHARS && statSize(ctx, found.path) === reader.bytes) ctx.search.replace(found.tenant, item.id, lines)
  else ctx.backfill.add({ tenant: found.tenant, id: item.id, path: found.path, size: found.size })
}

/** The file's size now; -1 when it is gone. */
function statSize (ctx: ReconcileContext, path: string): number {
  try {
    return ctx.storage.statSync(path).size
  } catch {
    return -1
  }
}

/** Another file of `id`, changed after `found`, is kept in the listing. */
function losesTo (ctx: ReconcileContext, found: Found, id: string): boolean {
  const other = ctx.index.get(found.tenant, id)
  return other !== undefined && other.path !== ctx.rel(found.path) && other.saved && other.modified > found.mtimeMs &&
    ctx.storage.existsSync(join(ctx.dataDir, other.path))
}
