/**
 * Output of long runs (import of many files, migrate). On a TTY stderr, one status line that is
 * rewritten in place (`\r` + erase line) and cleared at the end; result and summary lines go to
 * stdout as plain text either way, so piped output holds only those lines.
 */
import type { Output } from './args.js'

const ERASE_LINE = '\r\x1b[2K'

/** Progress, result and error lines of one long run. */
export class Reporter {
  readonly #out: Output
  readonly #err: Output
  readonly #tty: boolean
  #status = ''

  constructor (out: Output, err: Output) {
    this.#out = out
    this.#err = err
    this.#tty = err.isTTY === true
  }

  /** True when progress is drawn (stderr is a terminal). */
  get interactive (): boolean { return this.#tty }

  /** Shows `[done/total] text` as the status line; a no-op when stderr is not a TTY. */
  progress (done: number, total: number, text: string): void {
    if (!this.#tty) return
    const width = Math.max(20, (this.#err.columns ?? 80) - 1)
    const line = `[${done}/${total}] ${text}`
    this.#status = line.length > width ? line.slice(0, width - 1) + '…' : line
    this.#err.write(ERASE_LINE + this.#status)
  }

  /** A result or summary line on stdout, printed above the status line. */
  line (text: string): void { this.#print(this.#out, text) }

  /** `session-store: <message>` on stderr, printed above the status line. */
  error (message: string): void { this.#print(this.#err, `session-store: ${message}`) }

  /** Removes the status line. */
  done (): void {
    if (this.#tty && this.#status !== '') this.#err.write(ERASE_LINE)
    this.#status = ''
  }

  #print (stream: Output, text: string): void {
    if (this.#tty && this.#status !== '') this.#err.write(ERASE_LINE)
    stream.write(text + '\n')
    if (this.#tty && this.#status !== '') this.#err.write(this.#status)
  }
}

/** `1 file`, `2 files`; `many` for irregular plurals. */
export function plural (n: number, one: string, many = one + 's'): string {
  return `${n} ${n === 1 ? one : many}`
}
