/**
 * Builds the HTTP app from its dependencies and never listens (STYLE.md §1): src/server.ts
 * listens, tests call `buildApp` with memory storage and `inject`.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { ServerOptions } from 'node:http'
import Fastify, {
  type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions,
  type RawReplyDefaultExpression, type RawRequestDefaultExpression, type RawServerDefault,
} from 'fastify'
import blobRoutes from '../routes/blobs.js'
import entryRoutes from '../routes/entries.js'
import eventRoutes from '../routes/events.js'
import searchRoutes from '../routes/search.js'
import healthRoutes from '../routes/health.js'
import hygieneRoutes from '../routes/hygiene.js'
import metricsRoutes from '../routes/metrics.js'
import sessionRoutes from '../routes/sessions.js'
import tokenRoutes from '../routes/tokens.js'
import uiRoutes from '../routes/ui.js'
import { redactingLogger } from './auth/redaction.js'
import { Tenants } from './auth/tenants.js'
import type { TokenStore } from './auth/tokens.js'
import { createBlobStore, type BlobStoreFactory } from './blobs/index.js'
import type { BlobStore } from './blobs/types.js'
import type { Config } from './config.js'
import { Hygiene } from './hygiene/hygiene.js'
import { OneLineRequestLog, requestLogger } from './http/request-log.js'
import access from './plugins/access.js'
import bodyParsers from './plugins/body-parsers.js'
import connections from './plugins/connections.js'
import cors from './plugins/cors.js'
import downloads from './plugins/downloads.js'
import loopbackGuard from './plugins/loopback-guard.js'
import metrics from './plugins/metrics.js'
import openapi from './plugins/openapi.js'
import overload from './plugins/overload.js'
import problem, { clientErrorHandler, frameworkErrors } from './plugins/problem.js'
import quotas from './plugins/quotas.js'
import queryCoercion from './plugins/query-coercion.js'
import requestBodies from './plugins/request-bodies.js'
import routeAccess from './plugins/route-access.js'
import securityHeaders from './plugins/security-headers.js'
import serialization from './plugins/serialization.js'
import type { SessionRegistry } from './registry/session-registry.js'
import { registerSharedSchemas } from './schemas/shared.js'
import type { SessionStore } from './storage/store.js'

export interface AppDeps {
  config: Config
  /** The session store; `/readyz` proves it writable. */
  store: SessionStore
  /** The default tenant's blobs. */
  blobs: BlobStore
  /** Makes the blob store of every other tenant. Default: `createBlobStore(config.storage, root)`. */
  blobStores?: BlobStoreFactory
  /** The default tenant's registry (over `config.dataDir`); its owner closes it. */
  registry: SessionRegistry
  /**
   * The tokens in force (AUTH_TOKENS_FILE). Absent: open mode, everyone is the default tenant
   * with every scope (API.md).
   */
  tokens?: TokenStore
  /**
   * Every tenant's registry and blobs. Absent: the app makes one around `registry` and `blobs`
   * and closes the tenants it created when it closes.
   */
  tenants?: Tenants
  /**
   * Fastify logger options, or a ready pino logger. Either way the `Authorization` header and
   * `access_token` query parameters are redacted. Default: no logging.
   */
  logger?: FastifyServerOptions['logger'] | FastifyBaseLogger
  /** The soft file descriptor limit the connection caps follow; default: this process's, read at start. */
  descriptorLimit?: number
}

export type App = FastifyInstance<
  RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

/**
 * Longest path parameter in characters (longer is 414). Session ids reach 128 (API.md
 * "Conventions"); room above that lets a malformed id or hash be answered 400 by its route.
 */
export const MAX_PARAM_LENGTH = 1024

function tenantsOf (deps: AppDeps, app: App): Tenants {
  if (deps.tenants !== undefined) return deps.tenants
  const tenants = new Tenants({
    dataDir: deps.config.dataDir,
    store: deps.store,
    blobStores: deps.blobStores ?? ((root) => createBlobStore(deps.config.storage, root)),
    defaultTenant: { registry: deps.registry, blobs: deps.blobs },
    logger: app.log,
    maxOpenSessions: deps.config.maxOpenSessions,
  })
  app.addHook('onClose', async () => { await tenants.close() })
  return tenants
}

/**
 * Fastify's socket timeouts: a request must arrive whole within `requestTimeoutMs` (its headers
 * within `headersTimeoutMs`), an idle socket closes after `connectionTimeoutMs` (live streams
 * excepted, src/plugins/connections.ts), an idle keep-alive one after `keepAliveTimeoutMs`.
 */
function timeouts (config: Config): Pick<FastifyServerOptions, 'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout'> & { http: ServerOptions } {
  return {
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.connectionTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Node checks the request and header timeouts this often (30 s by default).
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs) },
  }
}

export async function buildApp (deps: AppDeps): Promise<App> {
  const app = Fastify({
    ...redactingLogger(deps.logger),
    logController: new OneLineRequestLog(),
    childLoggerFactory: requestLogger,
    bodyLimit: deps.config.bodyLimit,
    ...timeouts(deps.config),
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
  const tenants = tenantsOf(deps, app)
  app.decorate('tenants', tenants)
  app.decorate('tokens', deps.tokens ?? null)
  const hygiene = new Hygiene({ config: deps.config, store: deps.store, tenants, logger: app.log, ...(deps.tokens === undefined ? {} : { tokens: deps.tokens }) })
  app.decorate('hygiene', hygiene)
  app.addHook('onReady', async () => { hygiene.start() })
  app.addHook('onClose', async () => { await hygiene.stop() })
  registerSharedSchemas(app)
  // Live SSE streams never end on their own: end them before the server waits for its connections.
  app.addHook('preClose', async () => { tenants.shutdown() })

  // Order matters: route-access sees every route after it; the onRequest hooks run as
  // registered (CORS headers first, then the open mode's Host and Origin checks, then
  // connection caps and the watch on request bodies, then authentication, then load shedding per tenant).
  await app.register(routeAccess)
  await app.register(problem)
  await app.register(metrics)
  await app.register(serialization)
  await app.register(securityHeaders)
  await app.register(bodyParsers)
  await app.register(queryCoercion)
  await app.register(cors)
  await app.register(loopbackGuard, { tokens: deps.tokens })
  await app.register(connections, deps.descriptorLimit === undefined ? {} : { descriptorLimit: deps.descriptorLimit })
  await app.register(requestBodies)
  await app.register(access, { tokens: deps.tokens, tenants })
  await app.register(overload)
  await app.register(quotas)
  await app.register(downloads)
  await app.register(openapi)

  await app.register(healthRoutes, { store: deps.store })
  await app.register(metricsRoutes)
  await app.register(blobRoutes, { prefix: '/v1/blobs' })
  await app.register(sessionRoutes, { prefix: '/v1/sessions' })
  await app.register(entryRoutes, { prefix: '/v1/sessions' })
  await app.register(eventRoutes, { prefix: '/v1' })
  await app.register(searchRoutes, { prefix: '/v1/search' })
  await app.register(tokenRoutes, { prefix: '/v1/tokens' })
  await app.register(hygieneRoutes, { prefix: '/v1' })
  await app.register(uiRoutes)
  return app
}
