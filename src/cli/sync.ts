/**
 * `session-store sync <agent-sessions-dir> --server <url>`: mirrors an agent's own session
 * directory (pi's or oh-my-pi's) into a server and keeps following it (README "Use it with pi
 * and oh-my-pi"). `--once` copies the directory and exits, with progress and a summary.
 */
import { stat } from 'node:fs/promises'
import { relative, resolve } from 'node:path'
import pino, { type Logger } from 'pino'
import { sleep } from '../client/retry.js'
import { CliError, EXIT_FAILURE, EXIT_OK, integerFlag, stringFlag, UsageError, type Command, type Io } from './args.js'
import { blobDirOf } from './agent-files.js'
import { plural, Reporter } from './progress.js'
import { serverOf, TOKEN_ENV, withRemote } from './remote.js'
import { defaultStatePath, SyncState } from './sync-state.js'
import { BACKOFF_FIRST_MS, BACKOFF_MAX_MS, ServerUnavailable, Syncer, type FileReport } from './syncer.js'

/** Default wait between two looks at the directory, in ms. */
export const DEFAULT_INTERVAL_MS = 500
/** Passes `--once` tries while the server is unavailable before it gives up. */
const ONCE_TRIES = 8

export const syncCommand: Command = {
  name: 'sync',
  summary: "mirror an agent's session directory into a server and keep following it",
  help: `Usage: session-store sync <agent-sessions-dir> --server <url> [--once] [--delete] [--state <file>] [--interval <ms>]

Mirrors the session files of pi or oh-my-pi (e.g. ~/.pi/agent/sessions, ~/.omp/agent/sessions)
into the server and keeps following the directory: a new file is imported, each line the agent
appends is sent as it is written (idempotently, by entry id), and a file the agent rewrote
replaces its session (under If-Match). The blobs the lines refer to are uploaded from the agent's
blob directory (<agent-sessions-dir>/../blobs). A state file records what the server holds, so a
restart (even after kill -9) converges without losing or duplicating anything. On 429, 503 or an
unreachable server it waits (doubling, up to 30 s) and goes on.

Options:
  --server <url>    the server, e.g. http://127.0.0.1:8787
  --once            copy the directory once and exit (progress on a terminal, then a summary)
  --delete          delete a session on the server when its file is deleted (default: forget it)
  --state <file>    the state file (default <agent-sessions-dir>/.session-store-sync-<hash>.json)
  --interval <ms>   how often to look for changes (default ${DEFAULT_INTERVAL_MS})
  -h, --help        show this help

Environment:
  ${TOKEN_ENV}  the bearer token, when the server checks tokens
  LOG_LEVEL            pino level of the JSON log lines on stderr (default info: each session
                       it starts and stops following)
`,
  options: { server: { type: 'string' }, once: { type: 'boolean' }, delete: { type: 'boolean' }, state: { type: 'string' }, interval: { type: 'string' } },
  positionals: [1, 1],
  async run (values, [dir], io) {
    const url = stringFlag(values, 'server')
    if (url === undefined) throw new UsageError('sync: missing --server <url>')
    const server = serverOf(url, io.env)
    const sessionsDir = resolve(io.cwd, dir as string)
    if (!await isDirectory(sessionsDir)) throw new CliError(`${dir as string}: not a directory`)
    const statePath = stringFlag(values, 'state')
    const state = await SyncState.load(statePath === undefined ? defaultStatePath(sessionsDir, server.url) : resolve(io.cwd, statePath), server.url)
    const intervalMs = integerFlag(values, 'interval') ?? DEFAULT_INTERVAL_MS
    const log = pino({ level: io.env.LOG_LEVEL ?? 'info', base: undefined }, io.stderr)
    return await withRemote(server, async (remote) => {
      const syncer = new Syncer({
        client: remote.client, sessionsDir, blobsDir: blobDirOf(sessionsDir), state, log, deleteSessions: values.delete === true, signal: io.signal,
      })
      if (values.once === true) return await once(syncer, sessionsDir, io, log)
      log.info({ dir: sessionsDir, server: server.url, state: state.path }, 'sync started')
      await syncer.follow(intervalMs)
      log.info({ dir: sessionsDir }, 'sync stopped')
      return EXIT_OK
    })
  },
}

async function isDirectory (path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory()
  } catch {
    return false
  }
}

/** `--once`: every file once, with progress, one line per session and a summary. */
async function once (syncer: Syncer, sessionsDir: string, io: Io, log: Logger): Promise<number> {
  const report = new Reporter(io.stdout, io.stderr)
  const files = await syncer.files()
  const counts = { imported: 0, updated: 0, unchanged: 0, failed: 0 }
  for (const [i, file] of files.entries()) {
    if (io.signal.aborted) break
    const rel = relative(sessionsDir, file)
    report.progress(i, files.length, `syncing ${rel}`)
    const result = await withBackoff(async () => await syncer.syncFile(file), io, log)
    if (result === undefined) {
      counts.failed += files.length - i
      report.error('the server stayed unavailable; run sync again to go on')
      break
    }
    if (result.error !== undefined || result.outcome === undefined) {
      counts.failed++
      report.error(`${rel}: ${result.error instanceof Error ? result.error.message : 'not synced'}`)
      continue
    }
    if (result.outcome === 'not-a-session') continue
    report.line(`${rel}: ${describe(result)}`)
    if (result.outcome === 'imported') counts.imported++
    else if (result.outcome === 'unchanged') counts.unchanged++
    else counts.updated++
  }
  if (!io.signal.aborted) await withBackoff(async () => { await syncer.forgetDeleted(files) }, io, log)
  report.done()
  const total = counts.imported + counts.updated + counts.unchanged
  report.line(`synced ${plural(total, 'session')}: ${counts.imported} imported, ${counts.updated} updated, ${counts.unchanged} unchanged` +
    (counts.failed > 0 ? `, ${counts.failed} failed` : ''))
  return counts.failed === 0 && !io.signal.aborted ? EXIT_OK : EXIT_FAILURE
}

function describe (r: FileReport): string {
  const what = r.outcome === 'appended' ? `appended ${plural(r.appended, 'entry', 'entries')}` : r.outcome
  return `${what} (${r.id ?? '?'})`
}

/** Runs `fn`, waiting (doubling) while the server is unavailable; `undefined` after `ONCE_TRIES` tries. */
async function withBackoff<T> (fn: () => Promise<T>, io: Io, log: Logger): Promise<T | undefined> {
  let waitMs = BACKOFF_FIRST_MS
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn()
    } catch (err) {
      if (!(err instanceof ServerUnavailable) || attempt >= ONCE_TRIES || io.signal.aborted) {
        if (err instanceof ServerUnavailable) return undefined
        throw err
      }
      log.warn({ err: err.cause, retryInMs: waitMs }, 'server unavailable')
      try { await sleep(waitMs, io.signal) } catch { return undefined }
      waitMs = Math.min(BACKOFF_MAX_MS, waitMs * 2)
    }
  }
}
