/**
 * What `sync` knows it stored, per agent file, kept in a small JSON file replaced atomically
 * after every step. It never claims more than the server holds: a crash between a server write
 * and the state's replacement only makes the next run send that part again, which the server
 * takes as a no-op (records are idempotent by entry id, a whole file replaces).
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { writeAtomically } from './agent-files.js'

/** One agent file as the server holds it. */
export interface FileState {
  /** The session id (the file's header id). */
  id: string
  /** Bytes of the file, from the start, that the server holds (they end with a whole line). */
  offset: number
  /** The file's inode when it was read: an agent's atomic rewrite gives the file a new one. */
  ino: number
  /** The file's size and mtime when it was read: while both and the inode stay, nothing changed. */
  size: number
  mtimeMs: number
  /** SHA-256 of the first bytes up to `offset` (at most `WINDOW`) and of the last ones before it. */
  head: string
  tail: string
}

/** Bytes of each fingerprint window at the start and before the offset. */
export const WINDOW = 4096

interface StateFile {
  version: 1
  server: string
  files: Record<string, FileState>
}

/** The default state file for syncing `sessionsDir` to `server`: in that directory, named by the server. */
export function defaultStatePath (sessionsDir: string, server: string): string {
  return join(resolve(sessionsDir), `.session-store-sync-${createHash('sha256').update(server).digest('hex').slice(0, 8)}.json`)
}

export class SyncState {
  readonly path: string
  readonly #server: string
  readonly #files: Map<string, FileState>
  #dirty = false

  private constructor (path: string, server: string, files: Map<string, FileState>) {
    this.path = path
    this.#server = server
    this.#files = files
  }

  /** The state at `path`; empty when the file is missing, unreadable or for another server. */
  static async load (path: string, server: string): Promise<SyncState> {
    let files = new Map<string, FileState>()
    try {
      const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<StateFile>
      if (parsed.version === 1 && parsed.server === server && typeof parsed.files === 'object' && parsed.files !== null) {
        files = new Map(Object.entries(parsed.files))
      }
    } catch {
      // No state yet (or a torn one): every file is looked at afresh, which converges anyway.
    }
    return new SyncState(path, server, files)
  }

  get (file: string): FileState | undefined { return this.#files.get(file) }
  files (): string[] { return [...this.#files.keys()] }

  set (file: string, state: FileState): void {
    this.#files.set(file, state)
    this.#dirty = true
  }

  delete (file: string): void {
    if (this.#files.delete(file)) this.#dirty = true
  }

  /** Writes the state when it changed since the last save. */
  async save (): Promise<void> {
    if (!this.#dirty) return
    const state: StateFile = { version: 1, server: this.#server, files: Object.fromEntries(this.#files) }
    await writeAtomically(this.path, JSON.stringify(state) + '\n')
    this.#dirty = false
  }
}
