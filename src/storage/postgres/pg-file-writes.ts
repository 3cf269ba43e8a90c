/**
 * The changes `PgSessionStorage` makes to its files, each committed before the catalog
 * (pg-catalog.ts) records it: a whole file stored in one transaction, an append (to a session
 * through the group commit across sessions, append-groups.ts), a rename and a removal. The
 * caller runs them in its order of operations on each path. A change checks, in its transaction,
 * that the file is still at the version this process holds, and otherwise fails with `ESTALE`
 * (`StaleFile`), changing nothing. Answers to idempotent appends that wait for the lines being
 * written (replays.ts `keepWithLines`) are kept in the same transaction (for an append to a
 * session, in its group's).
 */
import type pg from 'pg'
import { AppendGroups } from './append-groups.js'
import { entryCount, type PgCatalog } from './pg-catalog.js'
import { fileText } from './pg-file-reads.js'
import { transaction } from './pool.js'
import { transactionKeeping, type LinesKeep, type PgReplayStore } from './replays.js'
import { entryLines } from './session-form.js'
import { appendToFile, assertVersionAt, keepsForm, moveAt, placeAt, removeAt, type Versioned } from './stored-files.js'
import type { PgUnsavedSessions } from './unsaved-sessions.js'

export class PgFileWrites {
  readonly #pool: pg.Pool
  readonly #catalog: PgCatalog
  readonly #unsaved: PgUnsavedSessions
  readonly #replays: PgReplayStore
  /** Appends to sessions, committed in groups across sessions. */
  readonly #groups: AppendGroups

  constructor (pool: pg.Pool, catalog: PgCatalog, unsaved: PgUnsavedSessions, replays: PgReplayStore) {
    this.#pool = pool
    this.#catalog = catalog
    this.#unsaved = unsaved
    this.#replays = replays
    this.#groups = new AppendGroups(pool)
  }

  /** Stores `content` as the whole file at `path` (`rel`), keeping `keeps` with it. */
  async replace (path: string, rel: string, content: string, keeps: readonly LinesKeep[] = []): Promise<void> {
    const catalog = this.#catalog
    catalog.tree.assertCanPut(path)
    const mtimeMs = catalog.tick()
    const placed = await transactionKeeping(this.#pool, keeps, async (client) => {
      await this.#unsaved.claim(client, path, content)
      await removeAt(client, rel)
      return await placeAt(client, rel, content, new Date(mtimeMs))
    })
    catalog.record(path, { ...placed, size: Buffer.byteLength(content, 'utf8'), mtimeMs, entries: entryCount(placed.stored, content) })
    catalog.hold(path, placed)
  }

  /**
   * Appends `text`; a session that cannot take it as entries is stored again whole, as a plain
   * file. @throws StaleFile when another server changed the session since this process held it
   */
  async append (path: string, rel: string, text: string): Promise<void> {
    const catalog = this.#catalog
    catalog.tree.assertCanPut(path)
    const file = catalog.tree.get(path)
    const entries = file !== undefined && file.size > 0 && file.stored.kind !== 'file' ? entryLines(text) : undefined
    const keeps = this.#replays.takeKeeps(path, text, entries)
    if (file === undefined || file.size === 0) return await this.replace(path, rel, text, keeps)
    const mtimeMs = catalog.tick()
    const mtime = new Date(mtimeMs)
    let appended: Versioned
    let lines = 0
    if (file.stored.kind === 'file') {
      appended = await transactionKeeping(this.#pool, keeps, async (client) => await appendToFile(client, rel, text, mtime))
    } else {
      // The group commit keeps the answers in its own transaction (append-groups.ts).
      const session = entries === undefined ? undefined : { rel, tenant: file.stored.tenant, id: file.stored.id, entries, mtime, expect: catalog.held(path)?.version, keeps }
      const result = session === undefined ? 'duplicate' : await this.#groups.append(session)
      if (result === 'duplicate' || session === undefined) return await this.replace(path, rel, await fileText(this.#pool, path, rel, file) + text, keeps)
      appended = result
      lines = session.entries.length
    }
    catalog.record(path, { ...file, ...appended, size: file.size + Buffer.byteLength(text, 'utf8'), mtimeMs, entries: file.entries + lines })
    catalog.hold(path, appended)
  }

  /** Replaces `nextPath` (`to`) by the file at `path` (`from`) in one transaction; the file keeps its mtime. */
  async rename (path: string, nextPath: string, from: string, to: string): Promise<void> {
    const catalog = this.#catalog
    const file = catalog.tree.file(path, 'rename')
    catalog.tree.assertCanPut(nextPath, 'rename')
    if (from === to) return
    const mtime = new Date(file.mtimeMs)
    // A move that keeps the form only changes the path; any other is stored again at `to`.
    const text = keepsForm(file.stored, to) ? undefined : await fileText(this.#pool, path, from, file)
    // Neither end may have changed since this process read or wrote it.
    const heldFrom = catalog.held(path)
    const held = catalog.held(nextPath)
    const placed = await transaction(this.#pool, async (client) => {
      if (heldFrom !== undefined) await assertVersionAt(client, from, heldFrom.version)
      if (held !== undefined) await assertVersionAt(client, to, held.version)
      await removeAt(client, to)
      if (text === undefined) return { stored: file.stored, ...await moveAt(client, from, to, file.stored) }
      await removeAt(client, from)
      await this.#unsaved.claim(client, nextPath, text)
      return await placeAt(client, to, text, mtime)
    })
    catalog.record(path, undefined)
    catalog.record(nextPath, { ...file, ...placed, entries: text === undefined ? file.entries : entryCount(placed.stored, text) })
    catalog.hold(path, undefined)
    catalog.hold(nextPath, placed)
  }

  /** Removes the file at `path` (`rel`). */
  async unlink (path: string, rel: string): Promise<void> {
    this.#catalog.tree.file(path, 'unlink')
    await transaction(this.#pool, async (client) => { await removeAt(client, rel) })
    this.#catalog.record(path, undefined)
    this.#catalog.hold(path, undefined)
  }
}
