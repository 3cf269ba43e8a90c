/**
 * Secrets never reach the logs (STYLE.md §14): every logger the app uses redacts the
 * `Authorization` header and logs request URLs with the value of any `access_token` query
 * parameter replaced, whichever way its name is spelled or encoded.
 */
import type { FastifyBaseLogger, FastifyRequest, FastifyServerOptions } from 'fastify'

export const REDACTED = '[REDACTED]'

/** pino `redact` paths: the header, wherever a request's headers get logged. */
export const REDACT_PATHS = ['req.headers.authorization', 'headers.authorization', 'request.headers.authorization']

function isTokenParam (rawKey: string): boolean {
  let key = rawKey.replace(/\+/g, ' ')
  try {
    key = decodeURIComponent(key)
  } catch {
    // A malformed escape: judged on the raw text.
  }
  return key.toLowerCase().includes('access_token')
}

/** `url` with the value of every `access_token` query parameter replaced by `[REDACTED]`. */
export function redactUrl (url: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url
  const params = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=')
    const key = eq === -1 ? pair : pair.slice(0, eq)
    return isTokenParam(key) ? `${key}=${REDACTED}` : pair
  })
  return `${url.slice(0, q)}?${params.join('&')}`
}

/** Fastify's request serializer, with the URL redacted. */
export function serializeRequest (req: FastifyRequest): Record<string, unknown> {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }
}

function isLoggerInstance (logger: unknown): logger is FastifyBaseLogger {
  return typeof logger === 'object' && logger !== null && typeof (logger as { child?: unknown }).child === 'function'
}

type LoggerSetting = FastifyServerOptions['logger'] | FastifyBaseLogger | undefined

/**
 * The Fastify logger options for `logger` (options, `true`, a ready pino logger, or nothing),
 * redacting as described above. A ready logger is wrapped in a child that does.
 */
export function redactingLogger (logger: LoggerSetting): Pick<FastifyServerOptions, 'logger' | 'loggerInstance'> {
  const serializers = { req: serializeRequest }
  if (isLoggerInstance(logger)) {
    return { loggerInstance: logger.child({}, { serializers, redact: REDACT_PATHS } as object) }
  }
  if (logger === undefined || logger === false) return { logger: false }
  const options = typeof logger === 'object' ? logger as Record<string, unknown> : {}
  const redact = Array.isArray(options.redact) ? [...options.redact as string[], ...REDACT_PATHS] : REDACT_PATHS
  return {
    logger: {
      ...options,
      serializers: { ...options.serializers as object, ...serializers },
      redact,
    } as FastifyServerOptions['logger'],
  }
}
