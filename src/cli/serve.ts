/**
 * `session-store serve`: the server of `npm start` (`runServer`), configured by the
 * environment of API.md "Running" with a flag for each variable; a flag wins over its variable.
 */
import { loadConfig, type Config } from '../config.js'
import { runServer } from '../run-server.js'
import { codeOf, messageOf, stringFlag, UsageError, type Command, type Values } from './args.js'

/** Flag → environment variable (API.md "Running"). */
const FLAGS = {
  port: 'PORT',
  host: 'HOST',
  'data-dir': 'DATA_DIR',
  storage: 'STORAGE',
  'log-level': 'LOG_LEVEL',
  'body-limit': 'BODY_LIMIT',
  'auth-tokens-file': 'AUTH_TOKENS_FILE',
  'rate-limit-max': 'RATE_LIMIT_MAX',
  'rate-limit-window-ms': 'RATE_LIMIT_WINDOW_MS',
  'max-sse-per-token': 'MAX_SSE_PER_TOKEN',
  'max-batch-entries': 'MAX_BATCH_ENTRIES',
  'max-event-loop-delay-ms': 'MAX_EVENT_LOOP_DELAY_MS',
  'cors-origins': 'CORS_ORIGINS',
} as const

/** The one switch: `--allow-unauthenticated` sets ALLOW_UNAUTHENTICATED=1. */
const ALLOW_UNAUTHENTICATED = 'allow-unauthenticated'

/** `serve [--port] [--host] [--data-dir] … [--allow-unauthenticated]`: a flag per variable. */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the HTTP server (what npm start runs)',
  help: `Usage: session-store serve [options]

Runs the server until SIGTERM or SIGINT, then shuts down gracefully (streams ended, every
session flushed and fsynced) and exits 0. SIGHUP reloads AUTH_TOKENS_FILE. Each option
overrides its environment variable. Logs are JSON lines on stdout.

Without AUTH_TOKENS_FILE access is open (one tenant, every scope), which is allowed on a
loopback HOST only, unless --allow-unauthenticated. Limits marked * default to 0 (off)
without AUTH_TOKENS_FILE.

Options:                         env                      default
  --port <n>                     PORT                     8787 (0 = any free port)
  --host <addr>                  HOST                     127.0.0.1
  --data-dir <dir>               DATA_DIR                 ./data
  --storage <disk|memory>        STORAGE                  disk
  --log-level <level>            LOG_LEVEL                info
  --body-limit <bytes>           BODY_LIMIT               67108864
  --auth-tokens-file <file>      AUTH_TOKENS_FILE         none (open access)
  --allow-unauthenticated        ALLOW_UNAUTHENTICATED    0
  --rate-limit-max <n>           RATE_LIMIT_MAX           6000 per window per token *
  --rate-limit-window-ms <ms>    RATE_LIMIT_WINDOW_MS     60000
  --max-sse-per-token <n>        MAX_SSE_PER_TOKEN        32 *
  --max-batch-entries <n>        MAX_BATCH_ENTRIES        1000 (0 = no cap) *
  --max-event-loop-delay-ms <ms> MAX_EVENT_LOOP_DELAY_MS  1000 (0 = never shed load) *
  --cors-origins <list>          CORS_ORIGINS             none (CORS off); * or comma-separated origins
  -h, --help                     show this help
`,
  options: {
    ...Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }])),
    [ALLOW_UNAUTHENTICATED]: { type: 'boolean' },
  },
  positionals: [0, 0],
  async run (values, _positionals, io) {
    await runServer(serveConfig(values, io.env, io.cwd))
    return 'serving'
  },
}

/**
 * The environment with the flags laid over it, checked by `loadConfig`.
 * @throws UsageError for an invalid flag value (named as the flag); InvalidConfig for an
 * invalid environment variable.
 */
export function serveConfig (values: Values, env: Record<string, string | undefined>, cwd: string): Config {
  const merged = { ...env }
  const fromFlag = new Map<string, string>()
  if (values[ALLOW_UNAUTHENTICATED] === true) merged.ALLOW_UNAUTHENTICATED = '1'
  for (const [flag, variable] of Object.entries(FLAGS)) {
    const value = stringFlag(values, flag)
    if (value === undefined) continue
    merged[variable] = value
    fromFlag.set(variable, flag)
  }
  try {
    return loadConfig(merged, cwd)
  } catch (err) {
    const message = messageOf(err)
    const variable = /^([A-Z_]+): /.exec(message)?.[1]
    const flag = variable === undefined ? undefined : fromFlag.get(variable)
    if (codeOf(err) === 'SS_INVALID_CONFIG' && flag !== undefined) {
      throw new UsageError(`--${flag}${message.slice((variable as string).length)}`)
    }
    throw err
  }
}
