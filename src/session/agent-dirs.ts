/**
 * Where the agents themselves file a cwd's sessions, besides the directory of SPEC.md §2.2
 * (docs/compatibility.md). Newer agents name a cwd under the home directory by its home-relative
 * path (`/home/u/proj` → `-proj`, the home itself → `-`) and one under the temporary directory by
 * its tmp-relative path (`-tmp-x`, `-tmp`), and move the old `--…--` directory there when they
 * list that cwd. A `DATA_DIR` pointed at an agent's own directory therefore holds both forms.
 * The service still creates new files under `--…--` (SPEC.md §2.2); it reads both.
 */
import { homedir, tmpdir } from 'node:os'
import { basename, join, posix } from 'node:path'
import type { SessionStorage } from '../storage/types.js'
import { encodeCwd } from './cwd.js'

/** `cwd` relative to `root` (`''` for the root itself), or `undefined` when it lies outside. Lexical. */
function within (root: string, cwd: string): string | undefined {
  if (root === '' || !posix.isAbsolute(cwd)) return undefined
  const base = root.endsWith('/') ? root.slice(0, -1) : root
  if (cwd === base) return ''
  return cwd.startsWith(base + '/') ? cwd.slice(base.length + 1) : undefined
}

function relativeName (prefix: string, relative: string): string {
  const encoded = relative.replace(/[/\\:]/g, '-')
  return encoded === '' ? prefix : (prefix.endsWith('-') ? `${prefix}${encoded}` : `${prefix}-${encoded}`)
}

/**
 * Every directory name under `DATA_DIR/sessions` that may hold sessions of `cwd`: the §2.2 name
 * first, then the agents' home- and tmp-relative names for this server's `$HOME` and tmpdir.
 */
export function sessionDirNames (cwd: string, home = homedir(), tmp = tmpdir()): string[] {
  const names = [encodeCwd(cwd)]
  const inHome = within(home, cwd)
  if (inHome !== undefined) names.push(relativeName('-', inHome))
  else {
    const inTmp = within(tmp, cwd)
    if (inTmp !== undefined) names.push(relativeName('-tmp', inTmp))
  }
  return [...new Set(names)]
}

/** The directories of `sessionDirNames` under `DATA_DIR/sessions`. */
export function sessionDirsOf (dataDir: string, cwd: string): string[] {
  return sessionDirNames(cwd).map((name) => join(dataDir, 'sessions', name))
}

/**
 * Where a session file is now when an agent moved its directory: the file of the same name in
 * another directory of `DATA_DIR/sessions` (agents rename directories, never files), or
 * `undefined`.
 */
export function findMovedSessionFile (storage: SessionStorage, dataDir: string, lostPath: string): string | undefined {
  const name = basename(lostPath)
  if (name.includes('*')) return undefined
  for (const dir of storage.listDirsSync(join(dataDir, 'sessions'))) {
    if (basename(dir).startsWith('.')) continue
    const found = storage.listFilesSync(dir, name).find((p) => basename(p) === name)
    if (found !== undefined) return found
  }
  return undefined
}
