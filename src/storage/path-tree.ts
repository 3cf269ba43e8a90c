/**
 * The file-system shape that storages without a real file system share (memory, and the
 * in-process catalog of the PostgreSQL storage): files by normalized path, directories created
 * or implied by a file, and the listing and error rules of SPEC.md §10.1. What a file holds is
 * the caller's `T`; this module only knows where files and directories are.
 */
import { basename, dirname, join, normalize, sep } from 'node:path'
import { nameMatcher } from './storage-helpers.js'

export type FsErrorCode = 'ENOENT' | 'EISDIR' | 'ENOTDIR'

/** An error shaped like the one `node:fs` throws for `code`. */
export function fsError (code: FsErrorCode, syscall: string, path: string): NodeJS.ErrnoException {
  const text = { ENOENT: 'no such file or directory', EISDIR: 'illegal operation on a directory', ENOTDIR: 'not a directory' }
  return Object.assign(new Error(`${code}: ${text[code]}, ${syscall} '${path}'`), { code, syscall, path })
}

/** Map key of a path: normalized, without a trailing separator. */
export function pathKey (path: string): string {
  const n = normalize(path)
  return n.length > 1 && n.endsWith(sep) ? n.slice(0, -1) : n
}

export class PathTree<T> {
  readonly #files = new Map<string, T>()
  readonly #dirs = new Set<string>()

  /** The file at `path`, if one is there. */
  get (path: string): T | undefined {
    return this.#files.get(pathKey(path))
  }

  /** Every file, by normalized path. */
  files (): IterableIterator<[string, T]> {
    return this.#files.entries()
  }

  isDir (path: string): boolean {
    return this.#dirs.has(pathKey(path))
  }

  /** True for a file, or for a directory created by `addDirs` or implied by a file below it. */
  exists (path: string): boolean {
    const k = pathKey(path)
    return this.#files.has(k) || this.#dirs.has(k)
  }

  /** The file at `path`; throws `ENOENT` when missing (`EISDIR` for a directory). */
  file (path: string, syscall: string): T {
    const file = this.#files.get(pathKey(path))
    if (file !== undefined) return file
    throw fsError(this.isDir(path) ? 'EISDIR' : 'ENOENT', syscall, path)
  }

  /** Throws what creating a file at `path` would meet: `EISDIR` on a directory, `ENOTDIR` below a file. */
  assertCanPut (path: string, syscall = 'open'): void {
    if (this.isDir(path)) throw fsError('EISDIR', syscall, path)
    this.#blocked(dirname(pathKey(path)))
  }

  /** Sets the file at `path`, creating its parent directories (see `assertCanPut`). */
  set (path: string, file: T): void {
    this.assertCanPut(path)
    const k = pathKey(path)
    this.addDirs(dirname(k))
    this.#files.set(k, file)
  }

  delete (path: string): void {
    this.#files.delete(pathKey(path))
  }

  /** Records `dir` and its ancestors as directories; all or nothing when a file is in the way (ENOTDIR). */
  addDirs (dir: string): void {
    const chain = this.#blocked(pathKey(dir))
    for (const d of chain) this.#dirs.add(d)
  }

  /** Full paths (`join(dir, name)`) of files directly in `dir` matching `pattern`, sorted by name. */
  listFiles (dir: string, pattern: string): string[] {
    const matches = nameMatcher(pattern)
    const k = pathKey(dir)
    const names: string[] = []
    for (const path of this.#files.keys()) {
      const name = basename(path)
      if (dirname(path) === k && matches(name)) names.push(name)
    }
    return names.sort().map((name) => join(dir, name))
  }

  /** Full paths of the directories directly in `dir`, created or implied by a file; sorted. */
  listDirs (dir: string): string[] {
    const k = pathKey(dir)
    const names = new Set<string>()
    for (const d of this.#dirs) if (dirname(d) === k && d !== k) names.add(basename(d))
    return [...names].sort().map((name) => join(dir, name))
  }

  /** `dir` and its ancestors; throws `ENOTDIR` when one of them is a file. */
  #blocked (dir: string): string[] {
    const chain = [dir]
    for (let d = dir; dirname(d) !== d; d = dirname(d)) chain.push(dirname(d))
    const blocked = chain.find((d) => this.#files.has(d))
    if (blocked !== undefined) throw fsError('ENOTDIR', 'mkdir', blocked)
    return chain
  }
}
