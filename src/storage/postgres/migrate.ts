/**
 * Applies the schema migrations (schema.ts) at start-up: versioned, recorded in
 * `ss_schema_migrations`, idempotent (applied versions are skipped), all pending ones in one
 * transaction (the database reaches the newest version or stays as it was), and safe when
 * several servers start at once (a transaction-level advisory lock makes them take turns). A database whose applied migration differs from this build's, or that
 * has a newer one, is refused with a clear message rather than served.
 */
import { createHash } from 'node:crypto'
import type pg from 'pg'
import { InvalidConfig } from '../../errors.js'
import { silentLogger, type Logger } from '../../session/logger.js'
import { databaseError } from './pool.js'
import { MIGRATIONS, type Migration } from './schema.js'

/** Key of the advisory lock the runners take turns on ("ss-migr" in ASCII). */
const LOCK_KEY = 0x73732d6d69677200n

function checksum (m: Migration): string {
  return createHash('sha256').update(m.sql).digest('hex')
}

export interface MigrateResult {
  /** Versions this call applied (empty when the schema was already current). */
  applied: number[]
  /** The schema version now. */
  version: number
}

/** Brings the database at `pool` to the newest schema of `migrations`. */
export async function migrate (pool: pg.Pool, options: { logger?: Logger, migrations?: readonly Migration[] } = {}): Promise<MigrateResult> {
  const log = options.logger ?? silentLogger
  const migrations = options.migrations ?? MIGRATIONS
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (err) {
    throw databaseError(err)
  }
  const applied: number[] = []
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY.toString()])
    await client.query('CREATE TABLE IF NOT EXISTS ss_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())')
    const { rows } = await client.query<{ version: number, checksum: string }>('SELECT version, checksum FROM ss_schema_migrations ORDER BY version')
    const known = new Map(rows.map((r) => [r.version, r.checksum]))
    const newest = Math.max(0, ...migrations.map((m) => m.version))
    const ahead = rows.find((r) => r.version > newest)
    if (ahead !== undefined) {
      throw new InvalidConfig('DATABASE_URL', `the database has schema version ${ahead.version}, newer than this server knows (${newest}); upgrade the server`)
    }
    for (const m of migrations) {
      const sum = checksum(m)
      const had = known.get(m.version)
      if (had !== undefined) {
        if (had !== sum) throw new InvalidConfig('DATABASE_URL', `schema migration ${m.version} (${m.name}) applied to the database differs from this server's`)
        continue
      }
      await client.query(m.sql)
      await client.query('INSERT INTO ss_schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, sum])
      applied.push(m.version)
      log.info({ version: m.version, name: m.name }, 'schema migration applied')
    }
    await client.query('COMMIT')
    return { applied, version: newest }
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw databaseError(err)
  } finally {
    client.release()
  }
}
