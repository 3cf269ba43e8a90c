/**
 * `session-store reindex <DATA_DIR|DATABASE_URL>`: builds the search index anew from the stored
 * sessions, with progress. A DATA_DIR is locked for the run (no server may use it); on a
 * database the servers are kept out too, as for a store move.
 */
import { EXIT_OK, UsageError, type Command } from './args.js'
import { Reporter } from './progress.js'
import { openStore, parseStoreTarget } from './stores.js'

export const reindexCommand: Command = {
  name: 'reindex',
  summary: 'build the search index anew from the stored sessions',
  help: `Usage: session-store reindex <DATA_DIR|DATABASE_URL>

Builds the search index anew from every stored session of every tenant: on disk the index in
DATA_DIR/.session-store/ (the server also builds it by itself when it is missing or damaged),
on PostgreSQL the ss_search table. Shows progress on a terminal and prints a summary. Holds the
DATA_DIR lock, or keeps servers off the database, for the run: stop the servers first. On a
database, a run stopped before its end leaves the index without what it had not reached: run it
again.

Options:
  -h, --help       show this help
`,
  options: {},
  positionals: [1, 1],
  async run (_values, [where], io) {
    if (where === undefined) throw new UsageError('reindex: missing DATA_DIR or DATABASE_URL')
    const store = await openStore(parseStoreTarget(where, io.cwd), 'source')
    const report = new Reporter(io.stdout, io.stderr)
    const started = Date.now()
    try {
      await store.sessions.reindex((done, total) => {
        report.progress(done, total, 'indexing')
      })
    } finally {
      report.done()
      await store.close()
    }
    report.line(`built the search index of ${store.label} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    return EXIT_OK
  },
}
