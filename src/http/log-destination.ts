/**
 * The process log's destination: lines logged during one turn of the event loop are joined and
 * written with one call, at the end of that turn. Under load a server logs a line per request,
 * many per turn; one write for all of them costs far less than one each, and no line waits longer
 * than the turn it was logged in.
 *
 * The write itself is synchronous (pino's sonic-boom in `sync` mode). An asynchronous write still
 * in the thread pool when the process ends is lost or lands after the lines written at exit, so
 * the last lines before a crash, the ones an operator needs, would be the ones missing. Lines
 * still held when the process exits (`process.exit`, a signal's graceful stop, an uncaught
 * exception) are written before it ends, after every earlier line.
 */
import { pino } from 'pino'

/** A batch this long (characters) is handed over at once rather than at the end of the turn. */
const MAX_HELD_CHARS = 64 * 1024

type Writer = ReturnType<typeof pino.destination>

/** Every batching destination of the process, handed over when the process exits. */
const live = new Set<TurnBatchedDestination>()
let exitHooked = false
/** Set once the process is exiting: no later turn comes, so every line is written at once. */
let exiting = false

function handOverAll (): void {
  exiting = true
  for (const destination of live) destination.handOver()
}

export class TurnBatchedDestination {
  readonly #writer: Writer
  #held = ''
  #scheduled = false

  /** Writes to `writer` (pino.destination with `sync: true`). */
  constructor (writer: Writer) {
    this.#writer = writer
    live.add(this)
    writer.on('close', () => { live.delete(this) })
    if (!exitHooked) {
      exitHooked = true
      // First among the exit listeners; lines the others log are written as they come.
      process.prependListener('exit', handOverAll)
    }
  }

  /** Takes one line (pino's `stream.write`). */
  write (line: string): boolean {
    this.#held += line
    if (exiting || this.#held.length >= MAX_HELD_CHARS) this.handOver()
    else if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#endOfTurn)
    }
    return true
  }

  /** Gives the held lines to the writer. */
  handOver (): void {
    if (this.#held === '') return
    const text = this.#held
    this.#held = ''
    this.#writer.write(text)
  }

  readonly #endOfTurn = (): void => {
    this.#scheduled = false
    this.handOver()
  }

  /** Writes out everything logged so far; `cb` runs once it is written (pino's `logger.flush`). */
  flush (cb?: (err?: Error) => void): void {
    this.handOver()
    this.#writer.flush(cb)
  }

  /** Writes out everything logged so far, synchronously. */
  flushSync (): void {
    this.handOver()
    this.#writer.flushSync()
  }
}

/** The process log's destination on file descriptor `fd` (1: standard output). */
export function processDestination (fd = 1): TurnBatchedDestination {
  return new TurnBatchedDestination(pino.destination({ dest: fd, sync: true }))
}
