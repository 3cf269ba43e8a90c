/**
 * `TEST_STORAGE=postgres`: the session store a test app runs on is `PgStore`, opened the way a
 * server opens it (`openStore`: instance lock, pool, migrations, the change feed), in a schema
 * of its own within the run's test database (test/setup/pg-database.ts), so apps never see each
 * other's rows.
 *
 * Creating a schema and applying the migrations to it costs far more than the app that uses it,
 * so the run keeps a pool of schemas (the `test_schemas` table): an app claims one that is free,
 * or creates one; closing the app empties every table but the migration record and frees the
 * schema for the next app, in this worker or another. A reused schema therefore holds the tables
 * of the migrations and no rows, as a fresh one does once migrated, and its migrations are checked
 * again by `openStore`. A schema that cannot be emptied is dropped instead.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import { openStore, type OpenedStore } from '../../src/storage/open-store.js'
import { SCHEMA_POOL_TABLE } from '../setup/pg-database.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's test database when TEST_STORAGE=postgres. */
    pgDatabaseUrl: string
  }
}

/** True when the test apps of this run keep their sessions in PostgreSQL. */
export const onPostgres = process.env.TEST_STORAGE === 'postgres'

/** The tables a migrated schema keeps when it is emptied for the next app. */
const KEPT_TABLES = ['ss_schema_migrations']

async function admin<R extends pg.QueryResultRow = pg.QueryResultRow> (sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: inject('pgDatabaseUrl') })
  await client.connect()
  try {
    return (await client.query<R>(sql)).rows
  } finally {
    await client.end()
  }
}

/** A free schema of the pool, now taken, or a new empty one (taken too). */
async function claimSchema (): Promise<string> {
  const [free] = await admin<{ name: string }>(`UPDATE ${SCHEMA_POOL_TABLE} SET busy = true WHERE name =
    (SELECT name FROM ${SCHEMA_POOL_TABLE} WHERE NOT busy LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING name`)
  if (free !== undefined) return free.name
  const name = `app_${randomBytes(6).toString('hex')}`
  await admin(`BEGIN; CREATE SCHEMA ${name}; INSERT INTO ${SCHEMA_POOL_TABLE} (name, busy) VALUES ('${name}', true); COMMIT`)
  return name
}

/** Empties every table of `schema` but the migration record and frees it; drops it when that fails. */
async function releaseSchema (schema: string): Promise<void> {
  const kept = KEPT_TABLES.map((t) => `'${t}'`).join(', ')
  try {
    await admin(`DO $$ DECLARE tables text; BEGIN
      SELECT string_agg(format('%I.%I', schemaname, tablename), ', ') INTO tables FROM pg_tables
        WHERE schemaname = '${schema}' AND tablename NOT IN (${kept});
      IF tables IS NOT NULL THEN EXECUTE 'TRUNCATE ' || tables; END IF;
      UPDATE ${SCHEMA_POOL_TABLE} SET busy = false WHERE name = '${schema}';
    END $$`)
  } catch {
    await admin(`BEGIN; DROP SCHEMA ${schema} CASCADE; DELETE FROM ${SCHEMA_POOL_TABLE} WHERE name = '${schema}'; COMMIT`)
  }
}

/** A database URL whose connections work in `schema`. */
function schemaUrl (schema: string): string {
  const url = new URL(inject('pgDatabaseUrl'))
  url.searchParams.set('options', `-c search_path=${schema}`)
  return url.toString()
}

/** A PostgreSQL session store with no sessions; `close` ends its pool and frees its schema. */
export async function openTestPgStore (dataDir: string): Promise<OpenedStore> {
  const schema = await claimSchema()
  let opened: OpenedStore
  try {
    opened = await openStore({ storage: 'postgres', dataDir, databaseUrl: schemaUrl(schema) })
  } catch (err) {
    await releaseSchema(schema)
    throw err
  }
  let closed: Promise<void> | undefined
  const close = async (): Promise<void> => {
    await opened.close()
    await releaseSchema(schema)
  }
  return { store: opened.store, blobs: opened.blobs, close: async () => { closed ??= close(); await closed } }
}
