/**
 * Expiry in PostgreSQL: unsaved sessions (no assistant message yet) left unchanged for
 * `UNSAVED_SESSION_MAX_AGE_MS`, and answers to idempotent appends past their day. On disk an
 * unsaved session lives in the memory of the server that holds it, and goes with it.
 */
import type pg from 'pg'
import type { Logger } from '../../session/logger.js'
import { query } from './pool.js'

/** How long an unsaved session may stay unchanged before it is removed (7 days). */
export const DEFAULT_UNSAVED_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000

/** Removes what expired; returns how many sessions and answers went. */
export async function purgeExpired (pool: pg.Pool, maxAgeMs: number): Promise<{ sessions: number, answers: number }> {
  const sessions = await query(pool, 'DELETE FROM ss_sessions WHERE NOT saved AND modified < $1', [Date.now() - maxAgeMs])
  const answers = await query(pool, 'DELETE FROM ss_answers WHERE expires_at < now()')
  return { sessions: sessions.rowCount ?? 0, answers: answers.rowCount ?? 0 }
}

/** Purges at once, then every quarter of `maxAgeMs` (at most every 10 minutes); returns the stop function. */
export async function startPurging (pool: pg.Pool, maxAgeMs: number, log: Logger): Promise<() => void> {
  const run = async (): Promise<void> => {
    try {
      const removed = await purgeExpired(pool, maxAgeMs)
      if (removed.sessions > 0 || removed.answers > 0) log.info(removed, 'expired unsaved sessions and idempotency answers purged')
    } catch (err) {
      log.warn({ err }, 'Purging expired unsaved sessions failed')
    }
  }
  await run()
  const timer = setInterval(() => { void run() }, Math.max(1000, Math.min(maxAgeMs / 4, 600_000)))
  timer.unref()
  return () => { clearInterval(timer) }
}
