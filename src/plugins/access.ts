/**
 * Who may do what, checked once per request before anything else of the route runs (one root
 * `onRequest` hook, after CORS and load shedding). For a route that is not public it:
 * 1. authenticates: `Authorization: Bearer <secret>` anywhere, `?access_token=<secret>` only on
 *    live streams (EventSource cannot send headers); without AUTH_TOKENS_FILE everyone is the
 *    default tenant with every scope (API.md's open mode);
 * 2. counts the request against the rate limit of its client (the token, else the IP), failed
 *    authentications included, and an authenticated one against its tenant's rate limit too
 *    (every token of a tenant together: minting tokens does not multiply the budget); a public
 *    route counts against PUBLIC_RATE_LIMIT_MAX of its IP;
 * 3. answers 401 (`WWW-Authenticate: Bearer realm="session-store"`) or 403;
 * 4. gives the request its tenant (`req.tenant`: registry and blobs) and, for a stream, takes
 *    one of the client's MAX_SSE_PER_TOKEN slots and one of its tenant's MAX_SSE_PER_TENANT
 *    slots until the stream's response closes, and ends
 *    the stream when its token is revoked or expires (src/http/stream-revocation.ts).
 * Route facts (scope, stream) come from src/plugins/route-access.ts.
 */
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import type { Tenant, Tenants } from '../auth/tenants.js'
import { DEFAULT_TENANT, type Principal, type TokenStore } from '../auth/tokens.js'
import { Forbidden, RateLimited, TokenExpired, TooManyStreams, Unauthenticated } from '../errors.js'
import { StreamRevocation } from '../http/stream-revocation.js'
import { StreamSlots } from '../http/stream-slots.js'

/** What the access plugin checks against. */
export interface AccessOptions {
  /** The tokens in force; absent = open mode. */
  tokens?: TokenStore
  tenants: Tenants
}

/** The challenge of every 401 (RFC 6750). */
export const CHALLENGE = 'Bearer realm="session-store"'
/** Seconds a client refused for holding too many streams should wait. */
const STREAM_RETRY_AFTER_S = 5

type Verdict = { ok: true, principal: Principal | null } | { ok: false, error: Error }

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i

/** The presented secret: `undefined` when none, `''` for an Authorization header that is not Bearer. */
export function presentedSecret (req: FastifyRequest, stream: boolean): string | undefined {
  const header = req.headers.authorization
  if (header !== undefined) return BEARER.exec(header)?.[1] ?? ''
  if (!stream) return undefined
  const query = req.query as Record<string, unknown> | undefined
  const token = query?.access_token
  return typeof token === 'string' ? token : undefined
}

function authenticate (tokens: TokenStore | undefined, req: FastifyRequest, stream: boolean): Verdict {
  if (tokens === undefined) return { ok: true, principal: null }
  const secret = presentedSecret(req, stream)
  if (secret === undefined) return { ok: false, error: new Unauthenticated('No access token: send Authorization: Bearer <token>') }
  if (secret === '') return { ok: false, error: new Unauthenticated('The Authorization header must be Bearer <token>') }
  const verdict = tokens.verify(secret)
  if (verdict.ok) return verdict
  return { ok: false, error: verdict.reason === 'expired' ? new TokenExpired() : new Unauthenticated('The access token is not valid') }
}

/** What limits count by: the token, else (open mode, failed authentication) the client IP. */
export function clientKey (req: FastifyRequest): string {
  return req.principal === null ? `ip:${req.ip}` : `token:${req.principal.tokenId}`
}

/** What tenant limits count by: the tenant of the token (open mode: the default tenant). */
export function tenantKey (req: FastifyRequest): string {
  return `tenant:${req.principal?.tenant ?? DEFAULT_TENANT}`
}

type Limiter = (this: FastifyInstance, req: FastifyRequest, reply: FastifyReply) => Promise<void>

/**
 * The per-client limiter (the plugin's own handler: headers and 429) and the per-tenant one,
 * each when on. The plugin runs one handler per request, so the tenant's is checked with
 * `createRateLimit` and answered here the same way.
 */
async function rateLimiters (app: FastifyInstance): Promise<{ api: Limiter[], public: Limiter | undefined }> {
  const { rateLimitMax, rateLimitTenantMax, publicRateLimitMax, rateLimitWindowMs: timeWindow } = app.config
  if (rateLimitMax === 0 && rateLimitTenantMax === 0 && publicRateLimitMax === 0) return { api: [], public: undefined }
  await app.register(rateLimit, { global: false })
  const errorResponseBuilder = (_req: FastifyRequest, context: { after: string }): Error => new RateLimited(context.after)
  const limiters: Limiter[] = []
  if (rateLimitMax > 0) {
    const perClient: preHandlerAsyncHookHandler = app.rateLimit({ max: rateLimitMax, timeWindow, keyGenerator: clientKey, errorResponseBuilder })
    limiters.push(async function (req, reply) { await perClient.call(this, req, reply) })
  }
  if (rateLimitTenantMax > 0) {
    const perTenant = app.createRateLimit({ max: rateLimitTenantMax, timeWindow, keyGenerator: tenantKey })
    limiters.push(async (req, reply) => {
      // A request that failed authentication has no tenant: the per-client limit counts it.
      if (req.principal === null && app.tokens !== null) return
      const verdict = await perTenant(req)
      if (verdict.isAllowed || !verdict.isExceeded) return
      reply.header('retry-after', String(verdict.ttlInSeconds))
      throw new RateLimited(`${verdict.ttlInSeconds} seconds`)
    })
  }
  let publicLimit: Limiter | undefined
  if (publicRateLimitMax > 0) {
    const perIp: preHandlerAsyncHookHandler = app.rateLimit({
      max: publicRateLimitMax, timeWindow, keyGenerator: (req) => `public:${req.ip}`, errorResponseBuilder,
    })
    publicLimit = async function (req, reply) { await perIp.call(this, req, reply) }
  }
  return { api: limiters, public: publicLimit }
}

async function access (app: FastifyInstance, { tokens, tenants }: AccessOptions): Promise<void> {
  app.decorateRequest('principal', null)
  // Set by the hook below on every route that is not public (typed as always there for routes).
  app.decorateRequest('tenant', null as unknown as Tenant)
  const { api: limiters, public: publicLimit } = await rateLimiters(app)
  const slots = new StreamSlots(app.config.maxSsePerToken)
  const tenantSlots = new StreamSlots(app.config.maxSsePerTenant)
  const revocation = tokens === undefined ? undefined : revokeStreams(app, tokens)

  if (tokens === undefined && limiters.length === 0 && publicLimit === undefined && app.config.maxSsePerToken === 0 &&
    app.config.maxSsePerTenant === 0) {
    // Open mode without limits: nothing to authenticate, count or cap, so every request that is
    // not public just gets the default tenant, in a synchronous hook (no promise per request).
    const everyone = tenants.get(DEFAULT_TENANT)
    app.addHook('onRequest', function openGuard (req: FastifyRequest, _reply: FastifyReply, done: () => void) {
      const { scope } = req.routeOptions.config
      if (scope !== undefined && scope !== 'public') req.tenant = everyone
      done()
    })
    return
  }

  /** One slot of the client and one of its tenant, or 429; a slot taken is given back on failure. */
  function takeStreamSlots (req: FastifyRequest, reply: FastifyReply): void {
    const refuse = (limit: number, per: string): never => {
      reply.header('retry-after', String(STREAM_RETRY_AFTER_S))
      throw new TooManyStreams(limit, per)
    }
    if (!tenantSlots.take(tenantKey(req), reply.raw)) refuse(app.config.maxSsePerTenant, 'tenant')
    if (!slots.take(clientKey(req), reply.raw)) refuse(app.config.maxSsePerToken, 'token')
  }

  app.addHook('onRequest', async function guard (req: FastifyRequest, reply: FastifyReply) {
    const { scope, stream = false } = req.routeOptions.config
    if (scope === undefined) return // unknown routes answer 404/405 to anyone
    if (scope === 'public') {
      await publicLimit?.call(this, req, reply)
      return
    }
    const verdict = authenticate(tokens, req, stream)
    if (verdict.ok) req.principal = verdict.principal
    for (const limit of limiters) await limit.call(this, req, reply)
    if (!verdict.ok) {
      reply.header('www-authenticate', CHALLENGE)
      throw verdict.error
    }
    if (req.principal !== null && !req.principal.scopes.has(scope)) throw new Forbidden(scope)
    req.tenant = tenants.get(req.principal?.tenant ?? DEFAULT_TENANT)
    if (stream) takeStreamSlots(req, reply)
    if (stream && req.principal !== null) revocation?.track(req.principal, reply.raw)
  })
}

/** Ends live streams whose token a reload of the token file dropped or changed, or that expired. */
function revokeStreams (app: FastifyInstance, tokens: TokenStore): StreamRevocation {
  const revocation = new StreamRevocation(
    (principal) => tokens.stillValid(principal),
    (principal) => { app.log.info({ tokenId: principal.tokenId, tenant: principal.tenant }, 'live stream ended: its token was revoked or expired') })
  const stop = tokens.onReload(() => { revocation.sweep() })
  app.addHook('onClose', async () => { stop() })
  return revocation
}

export default fp(access, { name: 'access', fastify: '5.x', dependencies: ['route-access'] })
