/**
 * The one PostgreSQL pool of a process (`STORAGE=postgres`): bounded, with timeouts on
 * connecting, on idle connections and on every statement, so a database that stops answering
 * gives `DatabaseUnavailable` (503 with Retry-After) instead of a hang. An idle connection that
 * dies (the database restarted) is dropped and logged, never an uncaught error; the pool opens
 * new connections when the database returns.
 */
import pg from 'pg'
import { DatabaseUnavailable } from '../../errors.js'
import { addGaugeSource } from '../../metrics/instruments.js'
import { silentLogger, type Logger } from '../../session/logger.js'

/** `DATABASE_TIMEOUT_MS` unset: the longest wait for a connection, one statement or an append. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 10_000

export interface PoolOptions {
  /** Most connections at once (default 10). */
  max?: number
  /** Longest wait for a connection, in ms (default DEFAULT_DATABASE_TIMEOUT_MS). */
  connectTimeoutMs?: number
  /**
   * Longest run of one statement, in ms, enforced by the server and the client (default
   * DEFAULT_DATABASE_TIMEOUT_MS; 0: none, for migrations). A connection whose statement ran out
   * of time is closed, not reused: on a stalled network it would never answer again.
   */
  statementTimeoutMs?: number
  /** An idle connection is closed after this many ms (default 30000). */
  idleTimeoutMs?: number
  logger?: Logger
}

/** SQLSTATE classes and codes that mean "the database is not there right now", not "the query is wrong". */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '57014'])
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const UNAVAILABLE_MESSAGES = [
  'Connection terminated', 'timeout exceeded when trying to connect', 'Query read timeout',
  'Client has encountered a connection error', 'Connection terminated unexpectedly', 'the database system is',
]

/** True when `err` says the database cannot be reached or did not answer in time. */
export function isUnavailable (err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (UNAVAILABLE_ERRNOS.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08'))) return true
  const message = (err as { message?: unknown }).message
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true
  const cause = (err as { cause?: unknown }).cause
  return cause !== undefined && cause !== err && isUnavailable(cause)
}

/** `DatabaseUnavailable` for an outage, `err` unchanged otherwise. */
export function databaseError (err: unknown): unknown {
  if (hasDatabaseCode(err)) return err
  return isUnavailable(err) ? new DatabaseUnavailable({ cause: err }) : err
}

function hasDatabaseCode (err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'SS_DATABASE_UNAVAILABLE'
}

/** A pool over `url`; its use is reported by the `ss_db_pool_*` gauges until `end()`. */
export function createPool (url: string, options: PoolOptions = {}): pg.Pool {
  const log = options.logger ?? silentLogger
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS,
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    // A transaction left open by a connection the network lost would hold its locks until the
    // database noticed; it is ended once idle that long.
    ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs, idle_in_transaction_session_timeout: statementTimeoutMs } : {}),
    application_name: 'session-store',
    keepAlive: true,
  })
  pool.on('error', (err) => { log.warn({ err }, 'An idle database connection failed; the pool opens a new one when needed') })
  // The pool listens to idle connections only: the loss of one that is held (a transaction's, a
  // read paged to a slow reader) would be an unhandled `error` event and end the process. It is
  // an error of the statement that meets it instead, and that connection is then destroyed.
  pool.on('connect', (client) => { client.on('error', heldConnectionLost) })
  const removers = [
    addGaugeSource('ss_db_pool_total', () => pool.totalCount),
    addGaugeSource('ss_db_pool_idle', () => pool.idleCount),
    addGaugeSource('ss_db_pool_waiting', () => pool.waitingCount),
  ]
  const end = pool.end.bind(pool)
  let ended: Promise<void> | undefined
  pool.end = (async () => {
    for (const remove of removers) remove()
    ended ??= end()
    await ended
  }) as typeof pool.end
  return pool
}

/**
 * Runs `fn` in one transaction on one connection of `pool` (`BEGIN` … `COMMIT`, `ROLLBACK` on a
 * throw); an outage surfaces as `DatabaseUnavailable`. A connection that failed is destroyed,
 * not returned to the pool.
 */
export async function transaction<T> (pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (err) {
    throw databaseError(err)
  }
  let broken: unknown
  try {
    await client.query('BEGIN')
    const result = await fn(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    if (isUnavailable(err)) broken = err
    else await client.query('ROLLBACK').catch((e: unknown) => { broken = e })
    throw databaseError(err)
  } finally {
    client.release(broken instanceof Error ? broken : broken === undefined ? undefined : true)
  }
}

/** The `error` event of a connection: reported by the statement that meets the loss, or by the pool when idle. */
function heldConnectionLost (): void {}

/** One statement on any connection of `pool`; an outage surfaces as `DatabaseUnavailable`. */
export async function query<R extends pg.QueryResultRow = pg.QueryResultRow> (pool: pg.Pool, text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>(text, values)
  } catch (err) {
    throw databaseError(err)
  }
}
