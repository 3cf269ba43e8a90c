/** The logging surface the session model needs: pino's shape, object first, message second. */
export interface Logger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

const noop = (): void => {}

/** Discards everything; the default for library use and tests that do not inspect logs. */
export const silentLogger: Logger = { info: noop, warn: noop, error: noop }
