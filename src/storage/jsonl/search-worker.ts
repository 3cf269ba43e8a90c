/**
 * The search worker of the JSONL store (search-index.ts): a thread that owns the writes to
 * `search.sqlite`, so that parsing what was appended and indexing it never takes the server's
 * thread. It applies each batch of changes it is sent in one transaction, in the order sent,
 * and answers `{ done }` (the batch's number) or `{ done, error }`; `{ close: true }` closes the
 * database, and the thread ends.
 */
import Database from 'better-sqlite3'
import { getPriority, setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { SearchWriter, type SearchChange } from './search-writer.js'

/** Page cache of the worker's connection, KiB. */
const CACHE_KB = 1024

/**
 * How much nicer this thread is than the server's: the server's own threads go first when the
 * cores are busy, and the index catches up in the time they leave (`ss_search_lag_seconds`). On
 * Linux a nice value is a thread's own, so the server's threads keep theirs; where it cannot be
 * set, nothing changes.
 */
const NICER = 10

try {
  setPriority(Math.min(19, getPriority() + NICER))
} catch {}

const port = parentPort
if (port === null) throw new Error('search-worker.ts runs as a worker thread')
const db = new Database((workerData as { file: string }).file)
db.pragma('journal_mode = WAL')
// Derived from the files, and built again when a crash leaves it behind: no fsync per commit.
db.pragma('synchronous = NORMAL')
// Its pages are written once and rarely read again: a small cache (better-sqlite3's default is 16 MB).
db.pragma(`cache_size = -${CACHE_KB}`)
const writer = new SearchWriter(db, 'main')

port.on('message', (batch: { done: number, changes: SearchChange[] } | { close: true }) => {
  if ('close' in batch) {
    db.close()
    port.close()
    return
  }
  try {
    writer.apply(batch.changes)
    port.postMessage({ done: batch.done })
  } catch (err) {
    port.postMessage({ done: batch.done, error: err instanceof Error ? err.message : String(err) })
  }
})
