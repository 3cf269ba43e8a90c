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
import { listingItemOf } from '../../session/listing-item.js'
import type { Logger } from '../../session/logger.js'
import { parseJsonlLenient } from '../../session/parser.js'
import { PREFIX_READ_BYTES } from '../../session/types.js'
import { tenantRoot } from '../paths.js'
import { SessionPrefix } from '../session-head.js'
import type { SessionStorage } from '../types.js'
import type { IndexRow, ListingIndex } from './listing-index.js'
import type { SearchIndex } from './search-index.js'

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

/** Indexes one file from its content; of two files of one id, the one changed last wins. */
export async function indexFile (ctx: ReconcileContext, found: Found): Promise<void> {
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
  searchFile(ctx, found.tenant, item.id, found.path, text)
}

/**
 * Hands the search index a session's text as read from `path`, unless the file grew since it was
 * read: an append made meanwhile indexes its own lines, and the text is read again.
 * Returns false in that case.
 */
export function searchFile (ctx: ReconcileContext, tenant: string, id: string, path: string, text: string): boolean {
  try {
    if (ctx.storage.statSync(path).size !== Buffer.byteLength(text, 'utf8')) return false
  } catch {
    return true // gone: its removal takes its documents
  }
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  ctx.search.replace(tenant, id, lines)
  return true
}

/**
 * Builds the search index from every saved session file the listing knows (the index was
 * emptied before: jsonl-store.ts), `progress` told as files are read. Stops early when
 * `stopped()` says so; resolves true when it read every file.
 */
export async function rebuildSearch (ctx: ReconcileContext, stopped: () => boolean, progress: (done: number, total: number) => void): Promise<boolean> {
  const files = ctx.index.files()
  progress(0, files.length)
  for (let i = 0; i < files.length; i++) {
    const file = files[i] as typeof files[number]
    for (let tries = 0; tries < 3; tries++) {
      if (stopped()) return false
      // What waits to be indexed bounds the memory a rebuild holds.
      if (ctx.search.pending > 50_000) await ctx.search.flushed()
      const path = ctx.abs(file.path)
      const text = await ctx.storage.readText(path).catch(() => undefined)
      if (text === undefined || searchFile(ctx, file.tenant, file.id, path, text)) break
    }
    if ((i + 1) % 100 === 0 || i + 1 === files.length) progress(i + 1, files.length)
  }
  await ctx.search.flushed()
  return !stopped()
}
