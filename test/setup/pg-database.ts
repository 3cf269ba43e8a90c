/**
 * With TEST_STORAGE=postgres (the `postgres` project of vitest.config.ts, or set by hand), one
 * database for the whole run, in which every test app gets a schema of its own
 * (test/helpers/pg-storage.ts), from the run's pool of schemas; dropped when the run ends.
 */
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import type {} from '../helpers/pg-storage.js'

/** The pool of migrated schemas the run's test apps take turns on: name, and whether an app holds it. */
export const SCHEMA_POOL_TABLE = 'public.test_schemas'

export default async function setup (project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env.TEST_STORAGE !== 'postgres' && project.config.env?.TEST_STORAGE !== 'postgres') return undefined
  const { createTestDatabase } = await import('../helpers/pg.js')
  const db = await createTestDatabase()
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  try {
    await client.query(`CREATE TABLE ${SCHEMA_POOL_TABLE} (name text PRIMARY KEY, busy boolean NOT NULL)`)
  } finally {
    await client.end()
  }
  project.provide('pgDatabaseUrl', db.url)
  return async () => { await db.drop() }
}
