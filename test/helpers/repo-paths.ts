/**
 * Finds what would break in a clone of this repository made anywhere else: a file of the
 * repository that names a path outside it. What can go wrong, and what is looked for:
 * - a path built from the file's own location (`join(import.meta.dirname, '..', …)`,
 *   `new URL('../…', import.meta.url)`, `$(dirname "$0")/..` in shell) that climbs out of the
 *   repository root;
 * - an absolute path, or a `../` path taken from the working directory (the repository root
 *   when the tests run), that exists on this machine outside the repository: beside this
 *   checkout (e.g. a sibling `shared/` directory), or anywhere that is not the operating
 *   system's own (`/etc`, `/proc`, `/tmp`, …). Session cwds in tests (`/work/p`) name nothing
 *   that exists and are data, not paths the tests read;
 * - a file the repository's own paths point at that exists here but is not tracked, so a
 *   clone would not have it (e.g. an ignored fixture);
 * - a tracked symlink leading out of the repository;
 * - `new URL(…, import.meta.url).pathname` used as a file path: percent-encoded, it is wrong
 *   as soon as the clone's path holds a space or a non-ASCII character.
 */
import { existsSync, lstatSync, readlinkSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'

/** Directories of the operating system, never of a particular checkout. */
const SYSTEM_ROOTS = ['/bin', '/dev', '/etc', '/lib', '/proc', '/run', '/sbin', '/sys', '/tmp', '/usr', '/var']
/** Directories of the repository that are made (by npm ci, a build or a run), never tracked. */
const GENERATED = ['node_modules', 'dist', 'coverage', 'data', 'test/artifacts']

export interface RepoFile {
  /** Path relative to the repository root, with `/` separators. */
  path: string
  text: string
}

export interface Finding {
  file: string
  line: number
  what: string
}

export interface ScanOptions {
  root: string
  /** Every tracked path (relative, `/` separators); a referenced path must be one of them. */
  tracked: ReadonlySet<string>
  /** Overrides SYSTEM_ROOTS (the self-test of this scanner works under the system's temp dir). */
  systemRoots?: readonly string[]
}

const inside = (parent: string, path: string): boolean => path === parent || path.startsWith(parent + sep)
const strictlyInside = (parent: string, path: string): boolean => path.startsWith(parent + sep)

/** The longest prefix of `path` that exists here ('/' when nothing does). */
function existingAncestor (path: string): string {
  let p = path
  while (p !== dirname(p) && !existsSync(p)) p = dirname(p)
  return p
}

/** Why `path` (absolute, outside the repository) is a machine-specific reference, or undefined. */
function outsideReason (path: string, options: ScanOptions): string | undefined {
  const root = resolve(options.root)
  if (inside(root, path)) return undefined
  const found = existingAncestor(resolve(path))
  // Nothing nearer than the checkout's own parents exists, and those exist wherever it is cloned.
  if (found === dirname(found) || inside(found, root)) return undefined
  if (strictlyInside(dirname(root), found)) return `${found} exists beside this checkout, not in the repository`
  const system = options.systemRoots ?? SYSTEM_ROOTS
  if (system.some((s) => inside(s, found))) return undefined
  if (found.split(sep).filter((c) => c !== '').length >= 2) return `${found} exists on this machine, outside the repository`
  return undefined
}

/** `'a'`, `"a"` (no interpolation) string arguments at the start of `args`. */
function stringArgs (args: string): string[] {
  const out: string[] = []
  for (const m of args.matchAll(/\s*,\s*(['"])([^'"\n]*)\1/gy)) out.push(m[2] as string)
  return out
}

/** Checks one anchored path (built from the file's directory) and pushes what is wrong with it. */
function checkAnchored (file: RepoFile, line: number, resolved: string, shown: string, options: ScanOptions, findings: Finding[]): void {
  const root = resolve(options.root)
  if (!inside(root, resolved)) {
    findings.push({ file: file.path, line, what: `${shown} leads out of the repository (to ${resolved})` })
    return
  }
  const rel = relative(root, resolved).split(sep).join('/')
  if (rel === '' || GENERATED.some((g) => rel === g || rel.startsWith(g + '/'))) return
  if (!existsSync(resolved)) return
  const tracked = statSync(resolved).isDirectory()
    ? [...options.tracked].some((t) => t.startsWith(rel + '/'))
    : options.tracked.has(rel)
  if (!tracked) findings.push({ file: file.path, line, what: `${shown} names ${rel}, which exists here but is not tracked` })
}

/** Every reference of `file` to a path a clone elsewhere would not have. */
export function scanFile (file: RepoFile, options: ScanOptions): Finding[] {
  const root = resolve(options.root)
  const dir = dirname(join(root, file.path))
  const findings: Finding[] = []
  const lines = file.text.split('\n')
  lines.forEach((text, i) => {
    const line = i + 1
    /** Spans of the anchored references on this line, already judged whole. */
    const anchored: Array<[number, number]> = []
    const judged = (m: RegExpMatchArray): void => { anchored.push([m.index ?? 0, (m.index ?? 0) + m[0].length]) }
    for (const m of text.matchAll(/\b(?:join|resolve)\(\s*(?:import\.meta\.dirname|__dirname)((?:\s*,\s*(['"])[^'"\n]*\2)*)/g)) {
      judged(m)
      const parts = stringArgs(m[1] as string)
      checkAnchored(file, line, resolve(dir, ...parts), m[0], options, findings)
    }
    for (const m of text.matchAll(/new URL\(\s*(['"])([^'"\n]*)\1\s*,\s*import\.meta\.url\s*\)(\.pathname)?/g)) {
      judged(m)
      checkAnchored(file, line, resolve(dir, m[2] as string), m[0], options, findings)
      if (m[3] !== undefined) findings.push({ file: file.path, line, what: `${m[0]} is percent-encoded: use fileURLToPath` })
    }
    for (const m of text.matchAll(/\$\(dirname "?\$(?:0|\{BASH_SOURCE\[0\]\})"?\)"?((?:\/[^\s"')]+)+)/g)) {
      judged(m)
      checkAnchored(file, line, resolve(dir, '.' + (m[1] as string)), m[0], options, findings)
    }
    for (const m of text.matchAll(/(?:^|[\s'"`=(:,[])((?:\/|\.\.\/)[^\s'"`$,;)\]}>]*)/g)) {
      const literal = m[1] as string
      const at = (m.index ?? 0) + m[0].length - literal.length
      if (literal.startsWith('//') || literal === '/' || anchored.some(([from, to]) => at >= from && at < to)) continue
      const candidates = isAbsolute(literal) ? [literal] : [resolve(root, literal), resolve(dir, literal)]
      for (const candidate of candidates) {
        const reason = outsideReason(candidate, options)
        if (reason !== undefined) { findings.push({ file: file.path, line, what: `'${literal}': ${reason}` }); break }
      }
    }
  })
  return findings
}

/** Tracked symlinks whose target is outside the repository. */
export function escapingSymlinks (root: string, tracked: Iterable<string>): Finding[] {
  const findings: Finding[] = []
  for (const path of tracked) {
    const full = join(root, path)
    if (!existsSync(full) && !lstatSafe(full)) continue
    if (!lstatSync(full).isSymbolicLink()) continue
    const target = resolve(dirname(full), readlinkSync(full))
    if (!inside(resolve(root), target)) findings.push({ file: path, line: 0, what: `symlink to ${target}, outside the repository` })
  }
  return findings
}

function lstatSafe (path: string): boolean {
  try { lstatSync(path); return true } catch { return false }
}
