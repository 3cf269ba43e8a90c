/**
 * Idempotency-Keys of appends in PostgreSQL (`ss_idempotency_keys`), so that a retry reaching
 * another server gets the first answer too. A key is kept per tenant and session id (it outlives
 * rewrites and moves of the session's file) until it expires; `purgeExpired`
 * (unsaved-sessions.ts) removes expired ones, and an expired key may be taken again before that.
 *
 * An attempt claims its key before it appends (a row without a response, naming the attempt as
 * `owner`), renews the claim while it works, and then keeps its answer in the claim's place or,
 * when it failed, removes the claim. Only one attempt holds a key at a time: the statement that
 * claims it inserts the row or takes it over, in one step, only when it is free. A claim not
 * renewed for `CLAIM_STALE_MS` is free again: its server died. That time is longer than a
 * statement may run (pool.ts), so that no append of a dead server can still land once the key
 * is taken over.
 *
 * An answer known before its lines are written is kept by the transaction that writes them
 * (`keepWithLines`, pg-file-writes.ts): were the server to die between that commit and a
 * statement of its own, the claim would go stale with the entries stored, and a retry would
 * append them again.
 *
 * The answer is kept as its JSON text (a jsonb string), since a jsonb object would reorder its
 * keys and a replay must be the first answer byte for byte.
 */
import type pg from 'pg'
import type { KeptWithLines, ReplayClaim, ReplayStore, StoredReplay } from '../types.js'
import { query, transaction } from './pool.js'
import { lineIds, type EntryLine } from './session-form.js'
import { tenantOf } from './stored-files.js'

/** How long the first answer to an append with an Idempotency-Key is kept: one day. */
export const REPLAY_TTL_MS = 24 * 60 * 60 * 1000

/** How often an attempt renews the claim on its key. */
export const CLAIM_RENEW_MS = 5000

/** A claim not renewed for this long is free again (above the 15 s statement timeout plus a renewal period). */
export const CLAIM_STALE_MS = 30_000

const KEY = 'tenant = $1 AND session = $2 AND key = $3'

/** Puts an answer ($5, its JSON text) in place of `owner`'s ($4) claim; values as `keepValues` makes them. */
const KEEP = `
  UPDATE ss_idempotency_keys SET response = to_jsonb($5::text), owner = NULL, claimed_at = NULL,
    expires_at = clock_timestamp() + $6 * interval '1 millisecond'
  WHERE ${KEY} AND owner = $4 AND response IS NULL`

/** An answer waiting for the write of its lines; `applied` once that write's transaction kept it. */
export class LinesKeep implements KeptWithLines {
  committed = false
  applied = false
  readonly values: unknown[]
  readonly entryIds: readonly string[]
  readonly #drop: () => void

  constructor (values: unknown[], entryIds: readonly string[], drop: (keep: LinesKeep) => void) {
    this.values = values
    this.entryIds = entryIds
    this.#drop = () => { drop(this) }
  }

  drop (): void { this.#drop() }
}

/** Keeps `keeps` in the transaction of `client`, which writes their lines. */
export async function keepInTransaction (client: pg.PoolClient, keeps: readonly LinesKeep[]): Promise<void> {
  for (const keep of keeps) keep.applied = (await client.query(KEEP, keep.values)).rowCount === 1
}

/** After the transaction of `keepInTransaction` committed: its answers are kept. */
export function keptInTransaction (keeps: readonly LinesKeep[]): void {
  for (const keep of keeps) keep.committed = keep.applied
}

/** `transaction(pool, fn)` that keeps `keeps` too, after `fn`: they are kept once it committed. */
export async function transactionKeeping<T> (pool: pg.Pool, keeps: readonly LinesKeep[], fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const result = await transaction(pool, async (client) => {
    const value = await fn(client)
    await keepInTransaction(client, keeps)
    return value
  })
  keptInTransaction(keeps)
  return result
}

export class PgReplayStore implements ReplayStore {
  readonly renewMs = CLAIM_RENEW_MS
  readonly #pool: pg.Pool
  readonly #rel: (path: string) => string
  /** Answers waiting for the write of their lines, by path. */
  readonly #waiting = new Map<string, LinesKeep[]>()

  constructor (pool: pg.Pool, rel: (path: string) => string) {
    this.#pool = pool
    this.#rel = rel
  }

  async claim (path: string, session: string, key: string, bodyHash: string, owner: string): Promise<ReplayClaim> {
    const at = [tenantOf(this.#rel(path)), session, key]
    for (;;) {
      const taken = await query(this.#pool, `
        INSERT INTO ss_idempotency_keys AS k (tenant, session, key, body_hash, response, expires_at, owner, claimed_at)
        VALUES ($1, $2, $3, $4, NULL, clock_timestamp() + $6 * interval '1 millisecond', $5, clock_timestamp())
        ON CONFLICT (tenant, session, key) DO UPDATE
          SET body_hash = EXCLUDED.body_hash, response = NULL, expires_at = EXCLUDED.expires_at,
            owner = EXCLUDED.owner, claimed_at = EXCLUDED.claimed_at
          WHERE k.expires_at <= clock_timestamp() OR (k.response IS NULL
            AND (k.owner = EXCLUDED.owner OR k.claimed_at <= clock_timestamp() - $7 * interval '1 millisecond'))
        RETURNING 1`,
      [...at, bodyHash, owner, REPLAY_TTL_MS, CLAIM_STALE_MS])
      if (taken.rowCount === 1) return { held: true }
      const { rows } = await query<{ body_hash: string, response: string | null }>(this.#pool,
        `SELECT body_hash, response FROM ss_idempotency_keys WHERE ${KEY}`, at)
      const row = rows[0]
      // Gone in between (the attempt holding it failed): claimed again.
      if (row === undefined) continue
      return row.response === null
        ? { held: false, bodyHash: row.body_hash }
        : { held: false, bodyHash: row.body_hash, response: JSON.parse(row.response) }
    }
  }

  async keep (path: string, session: string, key: string, owner: string, replay: StoredReplay): Promise<boolean> {
    return (await query(this.#pool, KEEP, this.#keepValues(path, session, key, owner, replay))).rowCount === 1
  }

  keepWithLines (path: string, session: string, key: string, owner: string, replay: StoredReplay, entryIds: readonly string[]): KeptWithLines {
    const keep = new LinesKeep(this.#keepValues(path, session, key, owner, replay), entryIds, (k) => { this.#forget(path, k) })
    this.#waiting.set(path, [...this.#waiting.get(path) ?? [], keep])
    return keep
  }

  /**
   * The answers waiting for a write of `text` to `path`: those whose lines are all in it. They
   * are taken: the caller keeps them in the transaction that writes `text` (`keepInTransaction`).
   * `entries`: the lines of `text` as entries, when the caller parsed them already.
   */
  takeKeeps (path: string, text: string, entries?: readonly EntryLine[]): LinesKeep[] {
    const waiting = this.#waiting.get(path)
    if (waiting === undefined) return []
    const ids = entries === undefined ? lineIds(text) : new Set(entries.map((e) => e.id))
    const taken = waiting.filter((keep) => keep.entryIds.every((id) => ids.has(id)))
    for (const keep of taken) this.#forget(path, keep)
    return taken
  }

  #forget (path: string, keep: LinesKeep): void {
    const rest = (this.#waiting.get(path) ?? []).filter((k) => k !== keep)
    if (rest.length === 0) this.#waiting.delete(path)
    else this.#waiting.set(path, rest)
  }

  #keepValues (path: string, session: string, key: string, owner: string, replay: StoredReplay): unknown[] {
    return [tenantOf(this.#rel(path)), session, key, owner, JSON.stringify(replay.response), REPLAY_TTL_MS]
  }

  async renew (path: string, session: string, key: string, owner: string): Promise<void> {
    await query(this.#pool, `UPDATE ss_idempotency_keys SET claimed_at = clock_timestamp() WHERE ${KEY} AND owner = $4 AND response IS NULL`,
      [tenantOf(this.#rel(path)), session, key, owner])
  }

  async release (path: string, session: string, key: string, owner: string): Promise<void> {
    await query(this.#pool, `DELETE FROM ss_idempotency_keys WHERE ${KEY} AND owner = $4 AND response IS NULL`,
      [tenantOf(this.#rel(path)), session, key, owner])
  }
}
