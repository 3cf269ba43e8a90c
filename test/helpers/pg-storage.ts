/**
 * `TEST_STORAGE=postgres`: the session storage a test app runs on is `PgSessionStorage`, opened
 * the way a server opens it (`openStorage`: pool, migrations, catalog), in a schema of its own
 * within the run's test database (test/setup/pg-database.ts), so apps never see each other's
 * rows and making one costs a schema, not a database. Closing drops the schema.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import { openStorage, type OpenedStorage } from '../../src/storage/open-storage.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's test database when TEST_STORAGE=postgres. */
    pgDatabaseUrl: string
  }
}

/** True when the test apps of this run keep their sessions in PostgreSQL. */
export const onPostgres = process.env.TEST_STORAGE === 'postgres'

async function admin (sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('pgDatabaseUrl') })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** A database URL whose connections work in a new, empty schema; `drop` removes the schema. */
export async function createTestSchema (): Promise<{ url: string, drop: () => Promise<void> }> {
  const schema = `app_${randomBytes(6).toString('hex')}`
  await admin(`CREATE SCHEMA ${schema}`)
  const url = new URL(inject('pgDatabaseUrl'))
  url.searchParams.set('options', `-c search_path=${schema}`)
  return { url: url.toString(), drop: async () => { await admin(`DROP SCHEMA ${schema} CASCADE`) } }
}

/** A fresh PostgreSQL session storage over `dataDir`; `close` ends its pool and drops its schema. */
export async function openTestPgStorage (dataDir: string): Promise<OpenedStorage> {
  const schema = await createTestSchema()
  const opened = await openStorage({ storage: 'postgres', dataDir, databaseUrl: schema.url })
  return { storage: opened.storage, blobs: opened.blobs, close: async () => { await opened.close(); await schema.drop() } }
}
