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
} as const

/** `serve [--port] [--host] [--data-dir] [--storage] [--log-level] [--body-limit]`. */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the HTTP server (what npm start runs)',
  help: `Usage: session-store serve [options]

Runs the server until SIGTERM or SIGINT, then shuts down gracefully (streams ended, every
session flushed and fsynced) and exits 0. Each option overrides its environment variable.
Logs are JSON lines on stdout.

Options:                      env          default
  --port <n>                  PORT         8787 (0 = any free port)
  --host <addr>               HOST         127.0.0.1
  --data-dir <dir>            DATA_DIR     ./data
  --storage <disk|memory>     STORAGE      disk
  --log-level <level>         LOG_LEVEL    info
  --body-limit <bytes>        BODY_LIMIT   67108864
  -h, --help                  show this help
`,
  options: Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }])),
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
