/**
 * A throw-away PostgreSQL database for one benchmark: created on the server named by
 * `BENCH_DATABASE_URL` (default the local `postgres` maintenance database), dropped afterwards.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** Runs `fn` with the URL of a fresh database, then drops it (also when `fn` throws). */
export async function withDatabase<T> (fn: (url: string) => Promise<T>): Promise<T> {
  const name = `ss_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  try {
    return await fn(url.toString())
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}
