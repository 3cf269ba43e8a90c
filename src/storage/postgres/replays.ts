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
 * The answer is kept as its JSON text (a jsonb string), since a jsonb object would reorder its
 * keys and a replay must be the first answer byte for byte.
 */
import type pg from 'pg'
import type { ReplayClaim, ReplayStore, StoredReplay } from '../types.js'
import { query } from './pool.js'
import { tenantOf } from './stored-files.js'

/** How long the first answer to an append with an Idempotency-Key is kept: one day. */
export const REPLAY_TTL_MS = 24 * 60 * 60 * 1000

/** How often an attempt renews the claim on its key. */
export const CLAIM_RENEW_MS = 5000

/** A claim not renewed for this long is free again (above the 15 s statement timeout plus a renewal period). */
export const CLAIM_STALE_MS = 30_000

const KEY = 'tenant = $1 AND session = $2 AND key = $3'

export class PgReplayStore implements ReplayStore {
  readonly renewMs = CLAIM_RENEW_MS
  readonly #pool: pg.Pool
  readonly #rel: (path: string) => string

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
    const kept = await query(this.#pool, `
      UPDATE ss_idempotency_keys SET response = to_jsonb($5::text), owner = NULL, claimed_at = NULL,
        expires_at = clock_timestamp() + $6 * interval '1 millisecond'
      WHERE ${KEY} AND owner = $4 AND response IS NULL`,
    [tenantOf(this.#rel(path)), session, key, owner, JSON.stringify(replay.response), REPLAY_TTL_MS])
    return kept.rowCount === 1
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
