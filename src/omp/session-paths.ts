/**
 * oh-my-pi's names for session files: `<sessionsDir>/<project dir>/<fileTs>_<id>.jsonl`, the
 * project directory named by the cwd relative to the home directory (`-proj`, the home itself
 * `-`) or to the temporary directory (`-tmp-x`), else `--<cwd>--` (SPEC.md §2.2). Pure string
 * functions, with no import of the server: this module runs inside the agent.
 */
import { posix } from 'node:path'

/** `cwd` relative to `root` (`''` for the root itself), or `undefined` when it lies outside. */
function within (root: string, cwd: string): string | undefined {
  if (root === '' || !posix.isAbsolute(cwd)) return undefined
  const base = root.endsWith('/') ? root.slice(0, -1) : root
  if (cwd === base) return ''
  return cwd.startsWith(base + '/') ? cwd.slice(base.length + 1) : undefined
}

const dashed = (s: string): string => s.replace(/[/\\:]/g, '-')

/** The directory oh-my-pi files the sessions of `cwd` in. */
export function projectDirName (cwd: string, home: string, tmp: string): string {
  const inHome = within(home, cwd)
  if (inHome !== undefined) return inHome === '' ? '-' : `-${dashed(inHome)}`
  const inTmp = within(tmp, cwd)
  if (inTmp !== undefined) return inTmp === '' ? '-tmp' : `-tmp-${dashed(inTmp)}`
  return `--${dashed(cwd.replace(/^[/\\]/, ''))}--`
}

/** `<fileTs>_<id>.jsonl`, `fileTs` the header timestamp with `:` and `.` as `-`. */
export function sessionFileName (timestamp: string, id: string): string {
  return `${timestamp.replace(/[:.]/g, '-')}_${id}.jsonl`
}

/** The session id a file name carries (`<fileTs>_<id>.jsonl`), or `undefined` for another name. */
export function idOfPath (path: string): string | undefined {
  const name = posix.basename(path.replace(/\\/g, '/'))
  const match = /^[^_]+_([A-Za-z0-9][A-Za-z0-9_-]{0,127})\.jsonl$/.exec(name)
  return match?.[1]
}

/** Every distinct blob hash `text` refers to (`blob:sha256:<hex>`). */
export function blobHashes (text: string): string[] {
  return [...new Set([...text.matchAll(/blob:sha256:([0-9a-f]{64})/g)].map((m) => m[1]!))]
}

/** The session id in the header of a session file's text (behind oh-my-pi's title line), or `undefined`. */
export function headerIdOf (text: string): string | undefined {
  for (const line of text.split('\n', 2)) {
    try {
      const record = JSON.parse(line) as { type?: unknown, id?: unknown }
      if (record.type === 'session' && typeof record.id === 'string') return record.id
    } catch {
      return undefined
    }
  }
  return undefined
}
