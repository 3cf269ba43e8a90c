/**
 * Idempotency-Keys of appends in PostgreSQL (`ss_idempotency_keys`), so that a retry reaching
 * another server gets the first answer too. A key is kept per tenant and session id (it outlives
 * rewrites and moves of the session's file) until it expires; `purgeExpired`
 * (unsaved-sessions.ts) removes expired ones, and an expired key may be taken again before that.
 * The answer is kept as its JSON text (a jsonb string), since a jsonb object would reorder its
 * keys and a replay must be the first answer byte for byte.
 */
import type pg from 'pg'
import type { ReplayStore, StoredReplay } from '../types.js'
import { query } from './pool.js'
import { tenantOf } from './stored-files.js'

/** How long the first answer to an append with an Idempotency-Key is kept: one day. */
export const REPLAY_TTL_MS = 24 * 60 * 60 * 1000

export class PgReplayStore implements ReplayStore {
  readonly #pool: pg.Pool
  readonly #rel: (path: string) => string

  constructor (pool: pg.Pool, rel: (path: string) => string) {
    this.#pool = pool
    this.#rel = rel
  }

  async get (path: string, session: string, key: string): Promise<StoredReplay | undefined> {
    const { rows } = await query<{ body_hash: string, response: string }>(this.#pool,
      'SELECT body_hash, response FROM ss_idempotency_keys WHERE tenant = $1 AND session = $2 AND key = $3 AND expires_at > clock_timestamp()',
      [tenantOf(this.#rel(path)), session, key])
    const row = rows[0]
    return row === undefined ? undefined : { bodyHash: row.body_hash, response: JSON.parse(row.response) }
  }

  async put (path: string, session: string, key: string, replay: StoredReplay): Promise<void> {
    await query(this.#pool, `
      INSERT INTO ss_idempotency_keys (tenant, session, key, body_hash, response, expires_at)
      VALUES ($1, $2, $3, $4, to_jsonb($5::text), clock_timestamp() + $6 * interval '1 millisecond')
      ON CONFLICT (tenant, session, key) DO UPDATE
        SET body_hash = EXCLUDED.body_hash, response = EXCLUDED.response, expires_at = EXCLUDED.expires_at
        WHERE ss_idempotency_keys.expires_at <= clock_timestamp()`,
    [tenantOf(this.#rel(path)), session, key, replay.bodyHash, JSON.stringify(replay.response), REPLAY_TTL_MS])
  }
}
