/** Every decorator of the app, declared once (set in `buildApp`, src/app.ts, and its plugins). */
import type { Tenant, Tenants } from './auth/tenants.js'
import type { Principal, TokenStore } from './auth/tokens.js'
import type { BlobStore } from './blobs/types.js'
import type { Config } from './config.js'
import type { Hygiene } from './hygiene/hygiene.js'
import type { Download } from './plugins/downloads.js'
import type { RouteAccess, RouteScope } from './plugins/route-access.js'
import type { SessionRegistry } from './registry/session-registry.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The default tenant's sessions by id, over the storage chosen at start-up. */
    registry: SessionRegistry
    /** The default tenant's content-addressed blobs (SPEC.md §9.4). */
    blobs: BlobStore
    config: Config
    /** Every tenant's registry and blobs, created on first use (src/auth/tenants.ts). */
    tenants: Tenants
    /** The tokens in force, reloaded on SIGHUP; `null` without AUTH_TOKENS_FILE (open mode). */
    tokens: TokenStore | null
    /** Blob collection, retention and the usage figures of quotas (src/hygiene/hygiene.ts). */
    hygiene: Hygiene
    /** What every registered route requires, in registration order (src/plugins/route-access.ts). */
    routeAccess: readonly RouteAccess[]
  }

  interface FastifyReply {
    /** Sends a streamed answer within its client's bytes in flight (src/plugins/downloads.ts). */
    sendDownload: (download: Download) => Promise<FastifyReply>
  }

  interface FastifyRequest {
    /** The token's principal; `null` in open mode and on public routes. */
    principal: Principal | null
    /**
     * The tenant the request works on: its registry and blobs. Set on every route that is not
     * public (src/plugins/access.ts); `null` on public ones.
     */
    tenant: Tenant
  }

  interface FastifyContextConfig {
    /**
     * The route takes a JSONL/text body (`application/x-ndjson`, `application/jsonl`,
     * `text/plain`) as one string; see src/plugins/body-parsers.ts.
     */
    textBody?: boolean
    /** The scope a token needs; default from the method (src/plugins/route-access.ts). */
    scope?: RouteScope
    /** A live SSE stream: accepts `?access_token=` and counts against MAX_SSE_PER_TOKEN. */
    stream?: boolean
    /** Answered 503 while the event loop lags; default: every route that is not public. */
    shedLoad?: boolean
    /**
     * A write the tenant's quotas bound (src/plugins/quotas.ts): `session` creates a session and
     * stores its body, `data` stores its body, `file` stores its body as the session `:id`,
     * creating it when there is none.
     */
    quota?: 'session' | 'data' | 'file'
  }
}
