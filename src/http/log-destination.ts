/**
 * The process log's destination: lines logged during one turn of the event loop are joined and
 * handed to pino's asynchronous writer (sonic-boom) once, at the end of that turn. Under load a
 * server logs a line per request, many per turn; one write call for all of them costs far less
 * than one each (a file-system request through the thread pool per write), and no line waits
 * longer than the turn it was logged in. Lines still held when the process exits (`process.exit`,
 * a signal's graceful stop, an uncaught exception) are handed over first, and the writer writes
 * everything out synchronously before the process ends.
 */
import { pino } from 'pino'

/** A batch this long (characters) is handed over at once rather than at the end of the turn. */
const MAX_HELD_CHARS = 64 * 1024

type Writer = ReturnType<typeof pino.destination>

/** Every batching destination of the process, handed over when the process exits. */
const live = new Set<TurnBatchedDestination>()
let exitHooked = false

function handOverAll (): void {
  for (const destination of live) destination.handOver()
}

export class TurnBatchedDestination {
  readonly #writer: Writer
  #held = ''
  #scheduled = false

  /** Writes to `writer` (pino.destination with `sync: false`, which flushes itself at exit). */
  constructor (writer: Writer) {
    this.#writer = writer
    live.add(this)
    writer.on('close', () => { live.delete(this) })
    if (!exitHooked) {
      exitHooked = true
      // First among the exit listeners: the writer's own synchronous flush at exit comes after.
      process.prependListener('exit', handOverAll)
    }
  }

  /** Takes one line (pino's `stream.write`). */
  write (line: string): boolean {
    this.#held += line
    if (this.#held.length >= MAX_HELD_CHARS) this.handOver()
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
  return new TurnBatchedDestination(pino.destination({ dest: fd, sync: false }))
}
