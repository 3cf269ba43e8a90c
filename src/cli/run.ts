/**
 * The `session-store` command line: picks the subcommand, parses its flags, runs it and maps
 * the outcome to an exit code (0 ok, 1 failure, 2 usage error). Errors are printed as
 * `session-store: <message>` on stderr. `main.ts` is the executable around this.
 */
import {
  EXIT_FAILURE, EXIT_OK, EXIT_USAGE, messageOf, parseCommand, UsageError, type Command, type Io,
} from './args.js'
import { gcCommand } from './gc.js'
import { migrateCommand } from './migrate.js'
import { reindexCommand } from './reindex.js'
import { searchCommand } from './search.js'
import { serveCommand } from './serve.js'
import { pullCommand } from './pull.js'
import { syncCommand } from './sync.js'
import { tailCommand } from './tail.js'
import { tokenCommand } from './token.js'
import { exportCommand, importCommand } from './transfer.js'

/** Every subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [serveCommand, importCommand, exportCommand, syncCommand, pullCommand, migrateCommand, tailCommand, searchCommand, reindexCommand, tokenCommand, gcCommand]

/** The top-level `--help` text. */
export function mainHelp (): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length))
  const list = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')
  return `Usage: session-store <command> [options]

Hosted storage for coding-agent sessions.

Commands:
${list}

Run 'session-store <command> --help' for a command's options.
Exit codes: 0 ok, 1 failure, 2 usage error.
`
}

/**
 * Runs the command line `argv` (without `node` and the script). Resolves with the exit code,
 * or `'serving'` once `serve` is listening (the process then lives until a signal).
 */
export async function runCli (argv: string[], io: Io): Promise<number | 'serving'> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? COMMANDS.find((c) => c.name === rest[0]) : undefined
    if (name === 'help' && rest[0] !== undefined && topic === undefined) return usage(io, `unknown command '${rest[0]}'`)
    if (name === undefined) return usage(io, 'missing command')
    io.stdout.write(topic?.help ?? mainHelp())
    return EXIT_OK
  }
  const command = COMMANDS.find((c) => c.name === name)
  if (command === undefined) return usage(io, `unknown command '${name}'`)
  const help = `session-store ${command.name} --help`
  try {
    const { values, positionals, help: wantsHelp } = parseCommand(command, rest)
    if (wantsHelp) {
      io.stdout.write(command.help)
      return EXIT_OK
    }
    return await command.run(values, positionals, io)
  } catch (err) {
    if (err instanceof UsageError) return usage(io, err.message, help)
    io.stderr.write(`session-store: ${messageOf(err)}\n`)
    return EXIT_FAILURE
  }
}

function usage (io: Io, message: string, help = 'session-store --help'): number {
  io.stderr.write(`session-store: ${message}\nRun '${help}' for usage.\n`)
  return EXIT_USAGE
}
