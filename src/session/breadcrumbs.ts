/**
 * Terminal breadcrumbs (SPEC.md §2.4, §11.3): `DATA_DIR/terminal-sessions/<terminal-id>` holds
 * `"<cwd>\n<sessionFile>\n"`, the session a terminal last used, so that `continueRecent` can
 * resume it. Written best-effort; read only through `resolveContinueTarget`.
 */
import { randomBytes } from 'node:crypto'
import { basename, dirname, join, resolve, sep } from 'node:path'
import type { SessionStorage } from '../storage/types.js'
import { assertValidTerminalId, encodeCwd } from './cwd.js'
import { findMostRecentSession, getRecentSessions } from './discovery.js'

/** The part of a pino logger that breadcrumb writing uses. */
export interface BreadcrumbLogger {
  warn(obj: object, msg: string): void
}

/** A parsed breadcrumb: its first two lines, verbatim. */
export interface Breadcrumb {
  cwd: string
  sessionFile: string
}

export interface ContinueTargetOptions {
  /** `DATA_DIR`; breadcrumbs live in `terminal-sessions/`, sessions in `sessions/` below it. */
  dataDir: string
  /** The cwd to continue in; a breadcrumb counts only when its first line equals it exactly. */
  cwd: string
  /** Client-supplied terminal id (§2.4); without it only the newest session is considered. */
  terminalId?: string
  /** Where to look for the newest session; default `DATA_DIR/sessions/<encodeCwd(cwd)>`. */
  sessionDir?: string
  /** Several directories to look in (the newest session of all wins); overrides `sessionDir`. */
  sessionDirs?: string[]
}

/**
 * Path of the breadcrumb of `terminalId`. Throws `InvalidArgument` unless the id matches
 * `^[A-Za-z0-9._-]{1,128}$` and is not `.` or `..`.
 * @see SPEC.md §2.4
 */
export function breadcrumbPath (dataDir: string, terminalId: string): string {
  assertValidTerminalId(terminalId)
  return join(dataDir, 'terminal-sessions', terminalId)
}

/**
 * Records `sessionFile` as the session of `terminalId` in `cwd`, via a temp file and a rename.
 * Best effort: a storage failure is logged with `log.warn` and swallowed (the temp file is
 * removed when possible). Rejects only with `InvalidArgument` for an invalid terminal id.
 * @see SPEC.md §2.4, §11.3
 */
export async function writeBreadcrumb (
  storage: SessionStorage, dataDir: string, terminalId: string, cwd: string, sessionFile: string,
  log: BreadcrumbLogger
): Promise<void> {
  const target = breadcrumbPath(dataDir, terminalId)
  if (/[\r\n]/.test(cwd) || /[\r\n]/.test(sessionFile)) {
    // A line break would shift the two-line format; such a breadcrumb could never match.
    log.warn({ terminalId }, 'Terminal breadcrumb not written: line break in cwd or session path')
    return
  }
  const tmp = join(dirname(target), `.${terminalId}.${randomBytes(8).toString('hex')}.tmp`)
  try {
    storage.ensureDirSync(dirname(target))
    await storage.writeText(tmp, `${cwd}\n${sessionFile}\n`)
    await storage.rename(tmp, target)
  } catch (err) {
    log.warn({ err, terminalId, path: target }, 'Failed to write terminal breadcrumb')
    try {
      await storage.unlink(tmp)
    } catch {
      // Usually the temp file was never created.
    }
  }
}

/**
 * The breadcrumb of `terminalId`, or `null` when it is missing, unreadable or has fewer than two
 * lines (a final `"\n"` ends the last line, it does not start another). Lines are not trimmed.
 * Throws `InvalidArgument` for an invalid terminal id.
 * @see SPEC.md §11.3
 */
export async function readBreadcrumb (
  storage: SessionStorage, dataDir: string, terminalId: string
): Promise<Breadcrumb | null> {
  const path = breadcrumbPath(dataDir, terminalId)
  let text: string
  try {
    text = await storage.readText(path)
  } catch {
    return null
  }
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  const [cwd, sessionFile] = lines
  return cwd === undefined || sessionFile === undefined ? null : { cwd, sessionFile }
}

/**
 * Steps 1–2 of `continueRecent`: the breadcrumb's session file when the breadcrumb of
 * `terminalId` exists, has at least two lines, its first line equals `cwd` exactly and its second
 * line names an existing regular file inside `DATA_DIR/sessions` (returned resolved); otherwise
 * the newest session of `sessionDir`; `null` when there is none (the caller then creates one).
 * Throws `InvalidArgument` for an invalid terminal id.
 * @see SPEC.md §11.3
 */
export async function resolveContinueTarget (
  storage: SessionStorage, options: ContinueTargetOptions
): Promise<string | null> {
  const { dataDir, cwd, terminalId } = options
  if (terminalId !== undefined) {
    const crumb = await readBreadcrumb(storage, dataDir, terminalId)
    if (crumb !== null && crumb.cwd === cwd) {
      const file = existingSessionFile(storage, dataDir, crumb.sessionFile)
      if (file !== null) return file
    }
  }
  const dirs = options.sessionDirs ?? [options.sessionDir ?? join(dataDir, 'sessions', encodeCwd(cwd))]
  if (dirs.length === 1) return await findMostRecentSession(storage, dirs[0]!)
  let newest: { path: string, mtimeMs: number } | undefined
  for (const dir of dirs) {
    const [found] = await getRecentSessions(storage, dir, 1)
    if (found !== undefined && (newest === undefined || found.mtime.getTime() > newest.mtimeMs)) newest = { path: found.path, mtimeMs: found.mtime.getTime() }
  }
  return newest?.path ?? null
}

/**
 * `file` resolved, when it lies strictly inside `DATA_DIR/sessions` and is a regular file
 * (`listFilesSync` lists regular files only), else `null`.
 */
function existingSessionFile (storage: SessionStorage, dataDir: string, file: string): string | null {
  if (file === '') return null
  const root = resolve(dataDir, 'sessions')
  const path = resolve(file)
  if (!path.startsWith(root + sep)) return null
  const name = basename(path)
  if (name.includes('*')) return null // listFilesSync would read it as a pattern
  try {
    return storage.listFilesSync(dirname(path), name).some((p) => basename(p) === name) ? path : null
  } catch {
    return null
  }
}
