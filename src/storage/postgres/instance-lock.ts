/**
 * Servers and a store migration (`session-store migrate`) on one database (schema) keep apart:
 * every server holds the instance lock shared, so any number of servers run side by side; a
 * migration takes it exclusively, so it starts only while no server runs and no server starts
 * until it is done. A session-level advisory lock on a connection of its own, held until
 * released; keyed by the schema, so schemas of one database are apart.
 */
import pg from 'pg'
import { InvalidConfig } from '../../errors.js'
import { databaseError } from './pool.js'

/** First key of the lock ("ss-inst" in ASCII, as an int4). */
const LOCK_SPACE = 0x73736931

export interface InstanceLock {
  release(): Promise<void>
}

/** `server`: shared with other servers; `migration`: alone. */
export type LockHolder = 'server' | 'migration'

/**
 * Takes the lock on the database at `url`.
 * @throws InvalidConfig naming DATABASE_URL when a holder it cannot share with has it.
 */
export async function acquireInstanceLock (url: string, holder: LockHolder = 'migration'): Promise<InstanceLock> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, application_name: `session-store ${holder} lock` })
  client.on('error', () => {}) // a dropped connection releases the lock; the pool reports outages
  try {
    await client.connect()
    const fn = holder === 'server' ? 'pg_try_advisory_lock_shared' : 'pg_try_advisory_lock'
    const { rows } = await client.query<{ ok: boolean }>(`SELECT ${fn}($1, hashtext(current_schema())) AS ok`, [LOCK_SPACE])
    if (rows[0]?.ok !== true) {
      throw new InvalidConfig('DATABASE_URL', holder === 'server'
        ? 'a store migration is running on this database; start the server once it is done'
        : 'another session-store server is using this database')
    }
  } catch (err) {
    await client.end().catch(() => {})
    throw databaseError(err)
  }
  let released: Promise<void> | undefined
  return { release: async () => { released ??= client.end().catch(() => {}); await released } }
}
