/**
 * One server per database (schema) for now: each instance serves the synchronous storage calls
 * from its own catalog, which only its own writes keep current, so a second instance on the same
 * data would answer from a stale one. At start a server takes a session-level advisory lock on a
 * connection of its own, held until it stops; a second server is refused. Keyed by the schema,
 * so schemas of one database are apart.
 */
import pg from 'pg'
import { InvalidConfig } from '../../errors.js'
import { databaseError } from './pool.js'

/** First key of the lock ("ss-inst" in ASCII, as an int4). */
const LOCK_SPACE = 0x73736931

export interface InstanceLock {
  release(): Promise<void>
}

/**
 * Takes the lock on the database at `url`.
 * @throws InvalidConfig naming DATABASE_URL when another server holds it.
 */
export async function acquireInstanceLock (url: string): Promise<InstanceLock> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, application_name: 'session-store lock' })
  client.on('error', () => {}) // a dropped connection releases the lock; the pool reports outages
  try {
    await client.connect()
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext(current_schema())) AS ok', [LOCK_SPACE])
    if (rows[0]?.ok !== true) {
      throw new InvalidConfig('DATABASE_URL', 'another session-store server is using this database; one server per database for now')
    }
  } catch (err) {
    await client.end().catch(() => {})
    throw databaseError(err)
  }
  let released: Promise<void> | undefined
  return { release: async () => { released ??= client.end().catch(() => {}); await released } }
}
