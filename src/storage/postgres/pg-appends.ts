/**
 * The group commit of one server's appends, across sessions (schema-log.ts `ss_journal_append`):
 * appends that arrive while statements are running wait and go together in the next one, one
 * transaction and one round trip for all of them. A few statements may run at once (each locks
 * only its own sessions' rows), so the commit does not wait on one round trip at a time.
 */
import type pg from 'pg'
import { DatabaseUnavailable } from '../../errors.js'
import { commitBatch } from '../../metrics/instruments.js'
import type { KeptAnswer } from '../store.js'
import { query } from './pool.js'
import { textArray } from './pg-text.js'

/** One session's append, as the statement takes it. */
export interface AppendItem {
  tenant: string
  id: string
  /** The version the session must still be at. */
  expect: number
  save: boolean
  /** The listing item as JSON, the cwd as a JSON string, the display name as one (`null`: unchanged). */
  info: string
  cwd: string
  recent: string | null
  modified: number
  messages: number
  /** Bytes of text the lines add. */
  bytes: number
  lines: readonly string[]
  answers: readonly KeptAnswer[]
}

export type AppendStatus =
  | { status: 'ok', version: number }
  | { status: 'stale' | 'missing' }
  | { status: 'answered', answers: Map<string, KeptAnswer> }

interface Waiting { item: AppendItem, resolve: (s: AppendStatus) => void, reject: (err: unknown) => void, timer: NodeJS.Timeout }

/** Statements of the group commit running at once. */
const CONCURRENT_GROUPS = 4
/** Most lines in one statement; more wait for the next. */
const GROUP_LINES = 20_000

const groupCommit = commitBatch.labels({ storage: 'postgres' })

export class AppendGroups {
  readonly #pool: pg.Pool
  readonly #origin: string
  readonly #timeoutMs: number
  readonly #waiting: Waiting[] = []
  #running = 0

  /**
   * `origin`: this server's id, carried by its notifications; `timeoutMs`: the longest an append
   * waits, queued and running, before it fails with `DatabaseUnavailable`.
   */
  constructor (pool: pg.Pool, origin: string, timeoutMs: number) {
    this.#pool = pool
    this.#origin = origin
    this.#timeoutMs = timeoutMs
  }

  /**
   * Stores `item` with the next group. Past the time allowed it fails: still queued, it is never
   * sent; already sent, whether it was stored is unknown, and the caller reads the session again
   * before its next write (a stale `expect` then keeps the two from both being stored).
   */
  submit (item: AppendItem): Promise<AppendStatus> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        item,
        resolve: (status) => { clearTimeout(waiting.timer); resolve(status) },
        reject: (err) => { clearTimeout(waiting.timer); reject(err) },
        timer: setTimeout(() => {
          const at = this.#waiting.indexOf(waiting)
          if (at >= 0) this.#waiting.splice(at, 1)
          reject(new DatabaseUnavailable({ cause: new Error(`The append had no answer from the database within ${this.#timeoutMs} ms`) }))
        }, this.#timeoutMs),
      }
      this.#waiting.push(waiting)
      if (this.#running < CONCURRENT_GROUPS) void this.#run()
    })
  }

  async #run (): Promise<void> {
    this.#running++
    try {
      while (this.#waiting.length > 0) await this.#commit(this.#take())
    } finally {
      this.#running--
    }
  }

  /** The next group: what waits, up to GROUP_LINES lines (always at least one append). */
  #take (): Waiting[] {
    let lines = 0
    let n = 0
    while (n < this.#waiting.length && (n === 0 || lines + this.#waiting[n]!.item.lines.length <= GROUP_LINES)) {
      lines += this.#waiting[n]!.item.lines.length
      n++
    }
    return this.#waiting.splice(0, n)
  }

  async #commit (group: Waiting[]): Promise<void> {
    const items = group.map((w) => w.item)
    const lines = items.flatMap((i) => i.lines)
    const keyed = items.flatMap((i, at) => i.answers.map((a) => ({ at: at + 1, a })))
    const text = textArray(12, lines)
    let rows: Array<{ item: number, status: string, version: string | null, answered: string | null }>
    try {
      rows = (await query<typeof rows[number]>(this.#pool, `SELECT * FROM ss_journal_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, ${text.sql}, $13, $14, $15, $16, $17)`, [
        items.map((i) => i.tenant), items.map((i) => i.id), items.map((i) => i.expect), items.map((i) => i.save),
        items.map((i) => i.info), items.map((i) => i.modified), items.map((i) => i.cwd), items.map((i) => i.messages),
        items.map((i) => i.recent), items.map((i) => i.bytes), items.map((i) => i.lines.length), text.value,
        keyed.map((k) => k.at), keyed.map((k) => k.a.key), keyed.map((k) => k.a.bodyHash), keyed.map((k) => k.a.answer),
        this.#origin,
      ])).rows
    } catch (err) {
      for (const w of group) w.reject(err)
      return
    }
    let committed = 0
    group.forEach((w, i) => {
      const row = rows[i]
      if (row?.status === 'ok') {
        committed += w.item.lines.length
        w.resolve({ status: 'ok', version: Number(row.version) })
      } else if (row?.status === 'answered') {
        w.resolve({ status: 'answered', answers: answersOf(row.answered ?? '[]') })
      } else w.resolve({ status: row?.status === 'stale' ? 'stale' : 'missing' })
    })
    if (committed > 0) groupCommit.observe(committed)
  }
}

function answersOf (json: string): Map<string, KeptAnswer> {
  const answers = new Map<string, KeptAnswer>()
  for (const [key, bodyHash, answer] of JSON.parse(json) as Array<[string, string, string]>) answers.set(key, { key, bodyHash, answer })
  return answers
}
