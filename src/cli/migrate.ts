/**
 * `session-store migrate <DATA_DIR> [--apply]`: finds the session files below version 3
 * (SPEC.md §4) and, with `--apply`, migrates them the way loading does: `SessionManager.open`
 * migrates in memory and persists with an atomic full rewrite (§4.4, §8.6). Without `--apply`
 * nothing is written. Either way the DATA_DIR lock is held, so no server runs meanwhile.
 */
import { readFile } from 'node:fs/promises'
import { basename, join, relative } from 'node:path'
import { FileBlobStore } from '../blobs/index.js'
import { isObject } from '../session/guards.js'
import { silentLogger } from '../session/logger.js'
import { fileVersion } from '../session/migrate.js'
import { classifyFile } from '../session/session-loader.js'
import { SessionManager } from '../session/session-manager.js'
import type { FileRecord } from '../session/types.js'
import { FileSessionStorage } from '../storage/index.js'
import { EXIT_FAILURE, EXIT_OK, messageOf, UsageError, type Command, type Io } from './args.js'
import { resolveDataDir, withDataDirLock } from './data-dir.js'
import { runStoreMove, wantsStoreMove } from './migrate-store.js'
import { plural, Reporter } from './progress.js'

/** What the survey found for one file. `rel` is relative to DATA_DIR. */
type Finding =
  | { kind: 'migrate', path: string, rel: string, from: number, reasons: string[] }
  | { kind: 'current' | 'unsupported' | 'skipped', path: string, rel: string, why: string }

interface Counts { total: number, migrate: number, current: number, unsupported: number, skipped: number, failed: number }

/** `migrate <DATA_DIR> [--apply]`, or `migrate --from <store> --to <store> [--merge]` (migrate-store.ts). */
export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'upgrade old session files in place, or move a store (--from/--to)',
  help: `Usage: session-store migrate <DATA_DIR> [--apply]
       session-store migrate --from <DATA_DIR|DATABASE_URL> --to <DATA_DIR|DATABASE_URL> [--merge]

Lists the session files under DATA_DIR/sessions/ whose version is below 3 and says what
migrating each one changes. Nothing is written unless --apply is given: then each file is
migrated and rewritten atomically, as loading it into the server would. Holds the DATA_DIR
lock, so it refuses to run while a server uses the directory. Prints a summary with counts;
exits 1 when a file cannot be migrated (unsupported version, or a failed rewrite).

With --from and --to, copies a whole store into another: every tenant's sessions (their text
byte for byte), terminal breadcrumbs and blobs, from a DATA_DIR to a PostgreSQL database
(postgres://…) or back (or DATA_DIR to DATA_DIR). Each session is stored whole in one step,
then both sides are read again and compared (SHA-256 of every session and blob, counts).
Files of a DATA_DIR that are no sessions (set-aside or temp files) stay behind. Progress goes
to stderr, a summary to stdout; exits 1 on any difference. A DATA_DIR is locked for the run,
so no server may use it. The destination must be empty unless --merge is given; --merge adds
to it and skips what it already holds, but never overwrites a session that differs (that is
reported as a problem, exit 1). An interrupted move leaves only whole sessions; run it again
with --merge to finish.

Options:
  --apply          rewrite the files (default: dry run, touching nothing)
  --from <store>   the store to copy: a DATA_DIR path or a postgres:// URL
  --to <store>     the store to copy into (created if missing)
  --merge          allow a destination that already holds sessions or blobs
  -h, --help       show this help
`,
  options: { apply: { type: 'boolean' }, from: { type: 'string' }, to: { type: 'string' }, merge: { type: 'boolean' } },
  positionals: [0, 1],
  async run (values, positionals, io) {
    if (wantsStoreMove(values)) return await runStoreMove(values, positionals, io)
    if (values.merge !== undefined) throw new UsageError('migrate: --merge goes with --from and --to')
    const [dir] = positionals
    if (dir === undefined) throw new UsageError("migrate: missing argument (see 'session-store migrate --help')")
    const dataDir = resolveDataDir(io.cwd, dir, true)
    const apply = values.apply === true
    const report = new Reporter(io.stdout, io.stderr)
    const counts = await withDataDirLock(dataDir, 'stop that server first: migrate needs the DATA_DIR to itself', async () => {
      const findings = await survey(dataDir, report, io)
      return apply ? await applyAll(dataDir, findings, report, io) : dryRun(findings, report)
    })
    report.done()
    const total = counts.total
    const rest = `${counts.current} current, ${counts.unsupported} unsupported, ${counts.skipped} skipped`
    report.line(apply
      ? `migrated ${counts.migrate} of ${plural(total, 'session file')}, ${rest}, ${counts.failed} failed`
      : `dry run: ${counts.migrate} of ${plural(total, 'session file')} would be migrated, ${rest}; nothing was changed (use --apply)`)
    if (io.signal.aborted) report.error('interrupted')
    return counts.unsupported + counts.failed > 0 || io.signal.aborted ? EXIT_FAILURE : EXIT_OK
  },
}

/** `DATA_DIR/sessions/<dir>/*.jsonl` (directories starting with `.` skipped), sorted, as the server scans. */
function sessionFiles (storage: FileSessionStorage, dataDir: string): string[] {
  const files: string[] = []
  for (const dir of storage.listDirsSync(join(dataDir, 'sessions'))) {
    if (basename(dir).startsWith('.')) continue
    files.push(...storage.listFilesSync(dir, '*.jsonl').filter((p) => p.endsWith('.jsonl')))
  }
  return files.sort()
}

/** Reads and classifies every session file; writes nothing. */
async function survey (dataDir: string, report: Reporter, io: Io): Promise<Finding[]> {
  const storage = new FileSessionStorage()
  const files = sessionFiles(storage, dataDir)
  const findings: Finding[] = []
  for (const [i, path] of files.entries()) {
    if (io.signal.aborted) break
    const rel = relative(dataDir, path)
    report.progress(i, files.length, `reading ${rel}`)
    findings.push(await inspect(storage, path, rel))
  }
  return findings
}

async function inspect (storage: FileSessionStorage, path: string, rel: string): Promise<Finding> {
  let text: string
  let file
  try {
    text = await readFile(path, 'utf8')
    file = await classifyFile(storage, path, text)
  } catch (err) {
    return { kind: 'unsupported', path, rel, why: messageOf(err) }
  }
  if (file.kind !== 'valid') return { kind: 'skipped', path, rel, why: file.kind === 'empty' ? 'empty file' : 'not a session file (no valid header)' }
  const from = fileVersion(file.records[0] as FileRecord) as number
  if (from >= 3) return { kind: 'current', path, rel, why: 'version 3' }
  return { kind: 'migrate', path, rel, from, reasons: reasons(file.records, from, text) }
}

/** What migrating changes, in words (SPEC.md §4.2, §4.3, §5.1). */
export function reasons (records: FileRecord[], from: number, text: string): string[] {
  const header = records[0] as FileRecord
  const out = [`version ${from}${header.version === undefined || header.version === null ? ' (none in header)' : ''} → 3`]
  if (from < 2) {
    out.push(`${plural(records.slice(1).filter((r) => r.type !== 'session').length, 'record')} get entry ids and a parent chain`)
    const indexes = records.filter((r) => r.type === 'compaction' && Object.hasOwn(r, 'firstKeptEntryIndex')).length
    if (indexes > 0) out.push(`${plural(indexes, 'firstKeptEntryIndex', 'firstKeptEntryIndexes')} → firstKeptEntryId`)
  }
  const hooks = records.filter((r) => r.type === 'message' && isObject(r.message) && r.message.role === 'hookMessage').length
  if (hooks > 0) out.push(`${plural(hooks, 'hookMessage role')} → custom`)
  const dropped = text.split('\n').filter((line) => line.trim() !== '').length - records.length
  if (dropped > 0) out.push(`${plural(dropped, 'unreadable line')} dropped`)
  return out
}

function tally (findings: Finding[]): Counts {
  const counts: Counts = { total: 0, migrate: 0, current: 0, unsupported: 0, skipped: 0, failed: 0 }
  for (const f of findings) counts[f.kind]++
  counts.total = findings.length - counts.skipped
  return counts
}

function reportOthers (findings: Finding[], report: Reporter): void {
  for (const f of findings) {
    if (f.kind === 'unsupported') report.error(f.why)
    else if (f.kind === 'skipped') report.line(`skipped ${f.rel}: ${f.why}`)
  }
}

function dryRun (findings: Finding[], report: Reporter): Counts {
  for (const f of findings) if (f.kind === 'migrate') report.line(`would migrate ${f.rel}: ${f.reasons.join('; ')}`)
  reportOthers(findings, report)
  return tally(findings)
}

async function applyAll (dataDir: string, findings: Finding[], report: Reporter, io: Io): Promise<Counts> {
  const counts = tally(findings)
  const plans = findings.filter((f) => f.kind === 'migrate')
  counts.migrate = 0
  const options = { dataDir, blobs: new FileBlobStore(join(dataDir, 'blobs')), logger: silentLogger }
  const storage = new FileSessionStorage()
  for (const [i, plan] of plans.entries()) {
    if (io.signal.aborted) break
    report.progress(i, plans.length, `migrating ${plan.rel}`)
    try {
      const m = await SessionManager.open(plan.path, undefined, storage, options)
      const version = m.getHeader().version
      await m.close()
      if (version !== 3) throw new Error(`still at version ${String(version)} after loading`)
      counts.migrate++
      report.line(`migrated ${plan.rel}: ${plan.reasons.join('; ')}`)
    } catch (err) {
      counts.failed++
      report.error(`${plan.rel}: ${messageOf(err)}`)
    }
  }
  reportOthers(findings, report)
  return counts
}
