/**
 * `session-store migrate --from <store> --to <store> [--merge]`: moves everything from one
 * store to another (a DATA_DIR or a `postgres://` database, in either direction) and verifies
 * the copy (store-move.ts). Both stores are held for the whole run: a DATA_DIR by its lock.
 */
import { EXIT_FAILURE, EXIT_OK, stringFlag, UsageError, type Io, type Values } from './args.js'
import { Reporter } from './progress.js'
import { describeMove, moveStore } from './store-move.js'
import { openStore, parseStoreTarget, type Store, type StoreTarget } from './stores.js'

/** True when the flags ask for a store move rather than the in-place upgrade of old files. */
export function wantsStoreMove (values: Values): boolean {
  return values.from !== undefined || values.to !== undefined
}

/**
 * Runs the move named by `--from`/`--to`.
 * @throws UsageError for a missing side, a DATA_DIR argument or `--apply` beside them, or one store named twice.
 */
export async function runStoreMove (values: Values, positionals: string[], io: Io): Promise<number> {
  const fromValue = stringFlag(values, 'from')
  const toValue = stringFlag(values, 'to')
  if (fromValue === undefined || toValue === undefined) throw new UsageError(`migrate: ${fromValue === undefined ? '--from' : '--to'} <DATA_DIR or DATABASE_URL> is missing`)
  if (positionals.length > 0) throw new UsageError('migrate: give either <DATA_DIR> or --from and --to, not both')
  if (values.apply !== undefined) throw new UsageError('migrate: --apply is for upgrading a DATA_DIR in place, not for --from/--to')
  const source = parseStoreTarget(fromValue, io.cwd)
  const destination = parseStoreTarget(toValue, io.cwd)
  if (sameTarget(source, destination)) throw new UsageError('migrate: --from and --to name the same store')
  const report = new Reporter(io.stdout, io.stderr)
  const opened: Store[] = []
  try {
    const from = await openStore(source, 'source')
    opened.push(from)
    const to = await openStore(destination, 'destination')
    opened.push(to)
    const result = await moveStore(from, to, { merge: values.merge === true, signal: io.signal }, report, io.stderr)
    report.done()
    for (const problem of result.problems) report.error(problem)
    if (result.interrupted) {
      report.error(`interrupted after ${describeMove(result)}; what was copied is complete, run again with --merge to finish`)
      return EXIT_FAILURE
    }
    if (result.problems.length > 0) {
      report.line(`copied ${describeMove(result)} from ${from.label} to ${to.label}; verification FAILED: ${result.problems.length} problem(s)`)
      return EXIT_FAILURE
    }
    report.line(`moved ${describeMove(result)} from ${from.label} to ${to.label}; verified: every session and blob matches`)
    return EXIT_OK
  } finally {
    report.done()
    for (const store of opened.reverse()) await store.close()
  }
}

function sameTarget (a: StoreTarget, b: StoreTarget): boolean {
  if (a.kind === 'data-dir' && b.kind === 'data-dir') return a.dir === b.dir
  if (a.kind === 'postgres' && b.kind === 'postgres') return a.url === b.url
  return false
}
