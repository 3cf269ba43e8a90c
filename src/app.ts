/**
 * Builds the HTTP app from its dependencies and never listens (STYLE.md §1): src/server.ts
 * listens, tests call `buildApp` with memory storage and `inject`.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, {
  type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions,
  type RawReplyDefaultExpression, type RawRequestDefaultExpression, type RawServerDefault,
} from 'fastify'
import blobRoutes from '../routes/blobs.js'
import entryRoutes from '../routes/entries.js'
import eventRoutes from '../routes/events.js'
import healthRoutes from '../routes/health.js'
import sessionRoutes from '../routes/sessions.js'
import type { BlobStore } from './blobs/types.js'
import type { Config } from './config.js'
import bodyParsers from './plugins/body-parsers.js'
import openapi from './plugins/openapi.js'
import problem, { clientErrorHandler, frameworkErrors } from './plugins/problem.js'
import queryCoercion from './plugins/query-coercion.js'
import serialization from './plugins/serialization.js'
import type { SessionRegistry } from './registry/session-registry.js'
import { registerSharedSchemas } from './schemas/shared.js'
import type { SessionStorage } from './storage/types.js'

export interface AppDeps {
  config: Config
  /** The session storage; `/readyz` proves it writable. */
  storage: SessionStorage
  blobs: BlobStore
  registry: SessionRegistry
  /** Fastify logger options, or a ready pino logger (used as is). Default: no logging. */
  logger?: FastifyServerOptions['logger'] | FastifyBaseLogger
}

export type App = FastifyInstance<
  RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

/**
 * Longest path parameter in characters (longer is 414). Session ids reach 128 (API.md
 * "Conventions"); room above that lets a malformed id or hash be answered 400 by its route.
 */
const MAX_PARAM_LENGTH = 1024

function isLoggerInstance (logger: AppDeps['logger']): logger is FastifyBaseLogger {
  return typeof logger === 'object' && logger !== null && typeof (logger as { child?: unknown }).child === 'function'
}

function loggerOptions (logger: AppDeps['logger']): Pick<FastifyServerOptions, 'logger' | 'loggerInstance'> {
  if (isLoggerInstance(logger)) return { loggerInstance: logger }
  return { logger: logger ?? false }
}

export async function buildApp (deps: AppDeps): Promise<App> {
  const app = Fastify({
    ...loggerOptions(deps.logger),
    bodyLimit: deps.config.bodyLimit,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
    // Schema violations are 400 and never silently repaired: no stripping of unknown keys, no
    // coercion (querystrings and params are converted by the query-coercion plugin instead).
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.decorate('config', deps.config)
  app.decorate('blobs', deps.blobs)
  app.decorate('registry', deps.registry)
  registerSharedSchemas(app)
  // Live SSE streams never end on their own: end them before the server waits for its connections.
  app.addHook('preClose', async () => { deps.registry.shutdown() })

  await app.register(problem)
  await app.register(serialization)
  await app.register(bodyParsers)
  await app.register(queryCoercion)
  await app.register(openapi)

  await app.register(healthRoutes, { storage: deps.storage })
  await app.register(blobRoutes, { prefix: '/v1/blobs' })
  await app.register(sessionRoutes, { prefix: '/v1/sessions' })
  await app.register(entryRoutes, { prefix: '/v1/sessions' })
  await app.register(eventRoutes, { prefix: '/v1' })
  return app
}
