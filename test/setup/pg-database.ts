/**
 * With TEST_STORAGE=postgres (the `postgres` project of vitest.config.ts, or set by hand), one
 * database for the whole run, in which every test app gets a schema of its own
 * (test/helpers/pg-storage.ts); dropped when the run ends.
 */
import type { TestProject } from 'vitest/node'
import type {} from '../helpers/pg-storage.js'

export default async function setup (project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env.TEST_STORAGE !== 'postgres' && project.config.env?.TEST_STORAGE !== 'postgres') return undefined
  const { createTestDatabase } = await import('../helpers/pg.js')
  const db = await createTestDatabase()
  project.provide('pgDatabaseUrl', db.url)
  return async () => { await db.drop() }
}
