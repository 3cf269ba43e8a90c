/**
 * Command-line plumbing shared by every command: the I/O a command may use, exit codes, the
 * errors that choose them, and option parsing with `node:util` `parseArgs`.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'

/** 0 ok, 1 failure, 2 usage error. */
export const EXIT_OK = 0
export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2

/** A writable the CLI prints to; `isTTY`/`columns` as on `process.stderr`. */
export interface Output {
  write(chunk: string | Uint8Array): boolean
  once(event: 'drain', listener: () => void): unknown
  isTTY?: boolean
  columns?: number
}

/** What a command may touch besides the file system and the network. */
export interface Io {
  stdout: Output
  stderr: Output
  env: Record<string, string | undefined>
  /** What relative paths resolve against. */
  cwd: string
  /** Aborted on the first SIGINT/SIGTERM (not for `serve`, which handles signals itself). */
  signal: AbortSignal
}

/** Wrong invocation: printed as `session-store: <message>`, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** An expected failure with a message fit for the user: exit code 1. */
export class CliError extends Error {
  override name = 'CliError'
}

type Options = NonNullable<ParseArgsConfig['options']>

/** Parsed flags: strings and booleans by option name. */
export type Values = Record<string, string | boolean | undefined>

/** One subcommand. `run` resolves with an exit code, or `'serving'` while a server runs on. */
export interface Command {
  name: string
  /** One line for the command list. */
  summary: string
  /** The whole `--help` text. */
  help: string
  options: Options
  /** Least and most positional arguments. */
  positionals: [min: number, max: number]
  run(values: Values, positionals: string[], io: Io): Promise<number | 'serving'>
}

/**
 * Parses `argv` against `command`'s options (`--help`/`-h` always allowed).
 * @throws UsageError for an unknown option, a missing value or a wrong number of arguments.
 */
export function parseCommand (command: Command, argv: string[]): { values: Values, positionals: string[], help: boolean } {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.positionals[1] > 0,
      strict: true,
    })
  } catch (err) {
    throw new UsageError(`${command.name}: ${(err as Error).message}`)
  }
  const { help, ...values } = parsed.values as Values
  const positionals = parsed.positionals
  if (help === true) return { values, positionals, help: true }
  const [min, max] = command.positionals
  if (positionals.length < min) throw new UsageError(`${command.name}: missing argument (see 'session-store ${command.name} --help')`)
  if (positionals.length > max) throw new UsageError(`${command.name}: unexpected argument '${positionals[max] ?? ''}'`)
  return { values, positionals, help: false }
}

/** A flag's string value, or `undefined` when absent. */
export function stringFlag (values: Values, name: string): string | undefined {
  const value = values[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * `--after`-style flag: a non-negative safe integer.
 * @throws UsageError naming the flag otherwise.
 */
export function integerFlag (values: Values, name: string): number | undefined {
  const raw = stringFlag(values, name)
  if (raw === undefined) return undefined
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value)) throw new UsageError(`--${name}: expected a non-negative integer, got '${raw}'`)
  return value
}

/** `err`'s message, for `session-store: <message>` lines. */
export function messageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** `err.code` when it is a string. */
export function codeOf (err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** Writes `text` and waits for `drain` when the stream asks for it (backpressure). */
export async function writeOut (out: Output, text: string | Uint8Array): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve) => { out.once('drain', resolve) })
}
