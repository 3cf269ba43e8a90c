/**
 * Stores whole session texts in a PostgreSQL database as a server stores an import (the store
 * of `STORAGE=postgres`), for benchmarks that start servers on sessions made beforehand.
 */
import { DEFAULT_TENANT } from '../../src/auth/tokens.js'
import { listingItemOf } from '../../src/session/listing-item.js'
import { parseJsonlLenient } from '../../src/session/parser.js'
import { openStore } from '../../src/storage/open-store.js'
import type { NewSession, SessionStore } from '../../src/storage/store.js'

/** The new session of `text` (a session file's whole text), saved, its listing facts from its records. */
export function sessionOf (text: string, modifiedMs = Date.now()): NewSession {
  const records = parseJsonlLenient(text)
  const info = listingItemOf(records, '/', modifiedMs)
  if (info === undefined) throw new Error('not a session file')
  const lines = text.slice(0, -1).split('\n').map((line) => ({ id: null, line }))
  return { id: info.id, lines, saved: true, info }
}

/** Runs `fn` with the store of the database at `url` (migrated), then closes it. */
export async function withPgStore<T> (url: string, fn: (store: SessionStore) => Promise<T>): Promise<T> {
  const opened = await openStore({ storage: 'postgres', dataDir: '/', databaseUrl: url })
  try {
    return await fn(opened.store)
  } finally {
    await opened.close()
  }
}

/** Stores `texts` (whole session files) in the default tenant of the database at `url`. */
export async function storeTexts (url: string, texts: Iterable<string>): Promise<void> {
  await withPgStore(url, async (store) => {
    for (const text of texts) await (await store.create(DEFAULT_TENANT, sessionOf(text))).close()
  })
}
