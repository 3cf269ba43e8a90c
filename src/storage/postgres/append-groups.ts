/**
 * Group commit across sessions: the appends to session files that are waiting at the same
 * moment, for any number of sessions, are committed by one statement (`ss_append_files`,
 * schema.ts, migration 6), so one transaction, one round trip and one WAL flush serve them all.
 * A few groups run at once; appends that arrive while they run wait for the next one. Each
 * append still resolves only once its group committed, and one refused append (stale, a
 * duplicate id, a missing session, one the database cannot take) fails alone, never the others
 * of its group.
 *
 * An append may carry answers to idempotent appends (`keeps`, replays.ts): a group with any runs
 * in a transaction that also keeps the answers of its appends that went in, so an answer is
 * committed exactly when its entries are.
 *
 * Appends to one session never overlap (the storage runs operations on one path in call order),
 * and a group takes at most one append per session, so rows are locked once per group, in the
 * fixed order the statement uses.
 */
import type pg from 'pg'
import { commitBatch } from '../../metrics/instruments.js'
import { isUnavailable, query, transaction } from './pool.js'
import { keepInTransaction, keptInTransaction, type LinesKeep } from './replays.js'
import type { EntryLine } from './session-form.js'
import { StaleFile, textArray, type Versioned } from './stored-files.js'

export interface SessionAppend {
  /** Path relative to DATA_DIR, for the errors. */
  rel: string
  tenant: string
  id: string
  entries: EntryLine[]
  mtime: Date
  /** The version the row must still be at (the caller's reader-writer holds it), if any. */
  expect?: number
  /** Answers kept in the same transaction when the append goes in. */
  keeps?: readonly LinesKeep[]
}

/** The session's version after the append, or 'duplicate' when it has one of the ids (nothing changed). */
export type AppendResult = Versioned | 'duplicate'

interface Pending {
  append: SessionAppend
  resolve: (result: AppendResult) => void
  reject: (err: unknown) => void
}

export interface AppendGroupsOptions {
  /** Groups committing at once (default 2). */
  inFlight?: number
  /** Most appends in one group (default 500). */
  maxGroup?: number
}

/** SQLSTATE of a deadlock the database broke by failing one statement: nothing of it was committed. */
const DEADLOCK = '40P01'
const DEADLOCK_RETRIES = 3

interface Row { item: number, status: string, version: string | null, born: string | null }

/** What the statement answered for `append` (its row). */
function outcome (append: SessionAppend, row: Row | undefined): AppendResult {
  if (row?.status === 'ok') return { version: Number(row.version), born: Number(row.born) }
  if (row?.status === 'duplicate') return 'duplicate'
  if (row?.status === 'stale') throw new StaleFile(append.rel)
  throw new Error(`stored session ${append.rel} is missing`)
}

/** The statement that commits `appends` (`ss_append_files`), and its values. */
function statementOf (appends: readonly SessionAppend[]): { text: string, values: unknown[] } {
  const lineItem: number[] = []
  const linePos: number[] = []
  const ids: string[] = []
  const lines: string[] = []
  appends.forEach((a, i) => {
    a.entries.forEach((e, j) => {
      lineItem.push(i + 1)
      linePos.push(j + 1)
      ids.push(e.id)
      lines.push(e.line)
    })
  })
  const idArray = textArray(8, ids)
  const lineArray = textArray(9, lines)
  const text = `SELECT item, status, version, born FROM ss_append_files($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::integer[],
    $6::integer[], $7::integer[], ${idArray.sql}, ${lineArray.sql})`
  const values = [
    appends.map((a) => a.tenant), appends.map((a) => a.id), appends.map((a) => a.expect ?? null),
    appends.map((a) => a.mtime), appends.map((a) => a.entries.length), lineItem, linePos, idArray.value, lineArray.value,
  ]
  return { text, values }
}

export class AppendGroups {
  readonly #pool: pg.Pool
  readonly #inFlight: number
  readonly #maxGroup: number
  #waiting: Pending[] = []
  #running = 0
  #scheduled = false

  constructor (pool: pg.Pool, options: AppendGroupsOptions = {}) {
    this.#pool = pool
    this.#inFlight = options.inFlight ?? 2
    this.#maxGroup = options.maxGroup ?? 500
  }

  /**
   * Appends `append.entries` to its session in the next group; resolves once committed.
   * @throws StaleFile when the session moved past `append.expect`
   */
  async append (append: SessionAppend): Promise<AppendResult> {
    return await new Promise<AppendResult>((resolve, reject) => {
      this.#waiting.push({ append, resolve, reject })
      this.#schedule()
    })
  }

  /**
   * Starts a group when one may run, after the current turn of the event loop: the appends that
   * requests handled in the same turn make go into the same group.
   */
  #schedule (): void {
    if (this.#scheduled || this.#running >= this.#inFlight || this.#waiting.length === 0) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      while (this.#running < this.#inFlight && this.#waiting.length > 0) void this.#run(this.#take())
    })
  }

  /** The next group: waiting appends in arrival order, one per session, at most `maxGroup`. */
  #take (): Pending[] {
    const group: Pending[] = []
    const rest: Pending[] = []
    const keys = new Set<string>()
    for (const p of this.#waiting) {
      const key = `${p.append.tenant}\u0000${p.append.id}`
      if (group.length >= this.#maxGroup || keys.has(key)) rest.push(p)
      else {
        keys.add(key)
        group.push(p)
      }
    }
    this.#waiting = rest
    return group
  }

  async #run (group: Pending[]): Promise<void> {
    this.#running++
    try {
      await this.#settle(group)
    } finally {
      this.#running--
      this.#schedule()
    }
  }

  /**
   * Commits `group` and settles each of its appends. A statement the database refused for
   * another reason than an outage (so nothing of it was committed) is tried again one append
   * at a time, so that an append the database cannot take fails alone.
   */
  async #settle (group: Pending[]): Promise<void> {
    let rows: Row[]
    try {
      rows = await this.#commit(group)
    } catch (err) {
      if (group.length > 1 && !isUnavailable(err)) for (const p of group) await this.#settle([p])
      else for (const p of group) p.reject(err)
      return
    }
    let entries = 0
    for (const row of rows) {
      const p = group[row.item - 1] as Pending
      try {
        const result = outcome(p.append, row)
        if (result !== 'duplicate') entries += p.append.entries.length
        p.resolve(result)
      } catch (err) {
        p.reject(err)
      }
    }
    if (entries > 0) commitBatch.observe({ storage: 'postgres' }, entries)
  }

  async #commit (group: Pending[]): Promise<Row[]> {
    const { text, values } = statementOf(group.map((p) => p.append))
    const keeps = group.flatMap((p) => p.append.keeps ?? [])
    for (let attempt = 1; ; attempt++) {
      try {
        if (keeps.length === 0) return (await query<Row>(this.#pool, text, values)).rows
        for (const keep of keeps) keep.applied = false
        const rows = await transaction(this.#pool, async (client) => {
          const { rows } = await client.query<Row>(text, values)
          for (const row of rows) if (row.status === 'ok') await keepInTransaction(client, group[row.item - 1]?.append.keeps ?? [])
          return rows
        })
        keptInTransaction(keeps)
        return rows
      } catch (err) {
        if ((err as { code?: unknown }).code !== DEADLOCK || attempt >= DEADLOCK_RETRIES) throw err
      }
    }
  }
}
