/**
 * Confinement of client-derived paths to `DATA_DIR` (SPEC.md §2.1, service rule). The check is
 * lexical (`path.resolve` + `path.relative`): it defeats `..` segments, absolute escapes and
 * sibling-prefix tricks (`/data2` is not inside `/data`), but does not follow symlinks, so
 * nothing under `DATA_DIR` may be a symlink pointing out of it.
 */
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { DEFAULT_TENANT } from '../auth/tokens.js'
import { PathOutsideDataDir } from '../errors.js'

/**
 * True when `p` (resolved against the working directory) is `root` itself or lies below it.
 * Both are resolved lexically; no file system access.
 */
export function isInside (root: string, p: string): boolean {
  if (root.includes('\0') || p.includes('\0')) return false
  const rel = relative(resolve(root), resolve(p))
  if (rel === '') return true
  // `..` alone or as the first segment escapes; `..foo` is an ordinary name inside root.
  if (rel === '..' || rel.startsWith('..' + sep)) return false
  // On Windows a path on another drive comes back absolute.
  return !isAbsolute(rel)
}

/**
 * Resolves `candidate` against `root` (an absolute `candidate` is taken as is) and returns the
 * absolute result. Throws `PathOutsideDataDir` (`SS_PATH_OUTSIDE_DATA_DIR`) when the result is
 * not `root` or below it, or when `candidate` contains a NUL byte (such a path names no file).
 * Touches nothing on disk.
 * @see SPEC.md §2.1
 */
export function resolveInside (root: string, candidate: string): string {
  const shown = candidate.replaceAll('\0', '\\0')
  if (candidate.includes('\0')) throw new PathOutsideDataDir(shown)
  const resolved = resolve(root, candidate)
  if (!isInside(root, resolved)) throw new PathOutsideDataDir(shown)
  return resolved
}

/**
 * The storage root of `tenant` under `dataDir`: the default tenant keeps `DATA_DIR` itself,
 * every other one `DATA_DIR/tenants/<tenant>/` with its own `sessions/`, `blobs/` and
 * `terminal-sessions/`.
 */
export function tenantRoot (dataDir: string, tenant: string): string {
  return tenant === DEFAULT_TENANT ? dataDir : join(dataDir, 'tenants', tenant)
}

/**
 * `path` as the file system spells it: file names are UTF-8, which holds no lone surrogate, so
 * each becomes U+FFFD (two cwds that differ only there share a directory, SPEC.md §2.2).
 */
export function fsPath (path: string): string {
  return Buffer.from(path, 'utf8').toString('utf8')
}
