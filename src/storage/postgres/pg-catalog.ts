/**
 * What `PgSessionStorage` knows of its files without asking the database: the in-process
 * catalog (path → kind, size, mtime, version, plus directories) that answers its synchronous
 * calls, and per file the version this process's reader-writer of it holds (see `track`).
 * `record` is the one place a catalog entry changes. Paths are absolute under DATA_DIR; rows
 * keep them relative to it, `/`-separated.
 */
import { relative, resolve, sep } from 'node:path'
import { PathOutsideDataDir } from '../../errors.js'
import { PathTree, pathKey } from '../path-tree.js'
import { isInside } from '../paths.js'
import type { Stored, StoredFile, Versioned } from './stored-files.js'

/** What the catalog knows of one file (`version` -1: a `writeTextSync` not committed yet). */
export type CatalogFile = Omit<StoredFile, 'rel'>

/** Entry rows of `text` stored as `stored`: its lines after the header. */
export function entryCount (stored: Stored, text: string): number {
  return stored.kind === 'session' ? Math.max(0, text.split('\n').length - 2) : 0
}

export function catalogFile (f: StoredFile): CatalogFile {
  return { stored: f.stored, size: f.size, mtimeMs: f.mtimeMs, version: f.version, born: f.born, entries: f.entries }
}

export class PgCatalog {
  readonly tree = new PathTree<CatalogFile>()
  readonly #dataDir: string
  /** Per path key: the version this process's reader-writer of the file holds. */
  readonly #held = new Map<string, Versioned>()
  #lastMtimeMs = 0

  /** `dataDir`: absolute DATA_DIR. */
  constructor (dataDir: string) {
    this.#dataDir = resolve(dataDir)
  }

  /** The absolute path of `rel`. */
  abs (rel: string): string {
    return resolve(this.#dataDir, rel)
  }

  /** `path` relative to DATA_DIR, `/`-separated. @throws PathOutsideDataDir */
  rel (path: string): string {
    if (!isInside(this.#dataDir, path)) throw new PathOutsideDataDir(path)
    return relative(this.#dataDir, resolve(path)).split(sep).join('/')
  }

  /**
   * The one place the catalog changes: `file` is now at `path` (undefined: nothing is). A change
   * committed by another instance is applied here as well.
   */
  record (path: string, file: CatalogFile | undefined): void {
    if (file === undefined) {
      this.tree.delete(path)
      return
    }
    this.tree.set(path, file)
    this.#lastMtimeMs = Math.max(this.#lastMtimeMs, file.mtimeMs)
  }

  /** The version this process holds of `path`, if any. */
  held (path: string): Versioned | undefined {
    return this.#held.get(pathKey(path))
  }

  /** Sets (undefined: forgets) the version this process holds of `path`. */
  hold (path: string, versioned: Versioned | undefined): void {
    if (versioned === undefined) this.#held.delete(pathKey(path))
    else this.#held.set(pathKey(path), { version: versioned.version, born: versioned.born })
  }

  /** `max(Date.now(), last + 1)`: mtimes strictly increase, so "newest" is deterministic. */
  tick (): number {
    this.#lastMtimeMs = Math.max(Date.now(), this.#lastMtimeMs + 1)
    return this.#lastMtimeMs
  }

  /** DATA_DIR-relative paths of every committed file of the catalog. */
  * knownPaths (): Iterable<string> {
    for (const [path, file] of this.tree.files()) if (file.version >= 0) yield this.rel(path)
  }
}
