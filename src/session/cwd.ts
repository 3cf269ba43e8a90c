/**
 * Session directory and file naming, and validation of client-supplied names
 * (SPEC.md §2.2–§2.4). Pure string functions: nothing here touches the file system.
 */
import { InvalidArgument } from '../errors.js'

/** Longest directory name a file system accepts, in UTF-8 bytes. */
const MAX_DIR_NAME_BYTES = 255
const TERMINAL_ID_RE = /^[A-Za-z0-9._-]{1,128}$/

/**
 * The session directory name for `cwd`: drop one leading `/` or `\`, turn every `/`, `\` and `:`
 * into `-`, wrap in `--…--`. Lossy and unnormalized: `/a-b/c` and `/a/b-c` share `--a-b-c--`.
 * @see SPEC.md §2.2
 */
export function encodeCwd (cwd: string): string {
  const first = cwd.charCodeAt(0)
  const rest = first === 0x2f || first === 0x5c ? cwd.slice(1) : cwd
  return `--${rest.replace(/[/\\:]/g, '-')}--`
}

/**
 * Throws `InvalidArgument` unless `cwd` is a non-empty string without NUL, CR or LF whose
 * directory name (`encodeCwd`) is at most 255 UTF-8 bytes. `name` is the argument name used in
 * the message.
 * @see SPEC.md §2.2
 */
export function assertValidCwd (cwd: unknown, name = 'cwd'): asserts cwd is string {
  if (typeof cwd !== 'string' || cwd === '') {
    throw new InvalidArgument(`${name} must be a non-empty string`)
  }
  if (/[\0\r\n]/.test(cwd)) {
    throw new InvalidArgument(`${name} must not contain NUL, CR or LF characters`)
  }
  const bytes = Buffer.byteLength(encodeCwd(cwd), 'utf8')
  if (bytes > MAX_DIR_NAME_BYTES) {
    throw new InvalidArgument(
      `${name} gives a session directory name of ${bytes} UTF-8 bytes (at most ${MAX_DIR_NAME_BYTES})`)
  }
}

/**
 * Throws `InvalidArgument` unless `id` matches `^[A-Za-z0-9._-]{1,128}$` and is neither `.` nor
 * `..`.
 * @see SPEC.md §2.4
 */
export function assertValidTerminalId (id: unknown, name = 'terminalId'): asserts id is string {
  if (typeof id !== 'string' || !TERMINAL_ID_RE.test(id) || id === '.' || id === '..') {
    throw new InvalidArgument(`${name} must match ${TERMINAL_ID_RE.source} and not be "." or ".."`)
  }
}

/**
 * The `fileTs` form of an ISO timestamp: every `:` and `.` replaced by `-`
 * (`2026-03-14T15:04:07.123Z` → `2026-03-14T15-04-07-123Z`).
 * @see SPEC.md §2.3
 */
export function fileTimestamp (iso: string): string {
  return iso.replace(/[:.]/g, '-')
}

/**
 * The session file name `<fileTs>_<id>.jsonl` for a header timestamp and session id.
 * @see SPEC.md §2.3
 */
export function sessionFileName (timestamp: string, id: string): string {
  return `${fileTimestamp(timestamp)}_${id}.jsonl`
}
