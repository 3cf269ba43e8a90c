/**
 * Open mode on a loopback HOST (no AUTH_TOKENS_FILE) trusts whoever reaches the port, and a
 * browser on the same machine reaches it too. So, as API.md "Running" says, in that mode:
 * - a request whose `Host` is not a loopback name or address (`localhost`, 127.0.0.0/8, `::1`,
 *   with any port) is `421 SS_MISDIRECTED_HOST`: a DNS-rebinding page talks to us under its
 *   own name and would otherwise read and write everything;
 * - a write (any method but GET, HEAD, OPTIONS) whose `Origin` is foreign is
 *   `403 SS_FOREIGN_ORIGIN`: a "simple" cross-site request (a `text/plain` import, a blob
 *   upload, a body-less fork) needs no preflight and would otherwise land. Not foreign: no
 *   `Origin` at all (not a browser, or a same-origin GET), the server's own origin
 *   (`http://<Host>`, so a page it serves such as /ui/ keeps working) and the origins of
 *   CORS_ORIGINS (every origin for `*`): the operator allowed those.
 * With tokens, or on a HOST that is not loopback (ALLOW_UNAUTHENTICATED=1), nothing is checked
 * here: a browser cannot forge a bearer token, and an exposed server is the operator's choice.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { isLoopback } from '../config.js'
import { ForeignOrigin, MisdirectedHost } from '../errors.js'

/** Longest Host or Origin quoted back in a problem's detail. */
const QUOTE_MAX = 100
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The name part of a `Host` header (`[::1]:8787` → `[::1]`, `localhost:8787` → `localhost`). */
export function hostName (host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1)
  const colon = host.indexOf(':')
  return colon === -1 ? host : host.slice(0, colon)
}

function originOf (text: string): string | undefined {
  return URL.canParse(text) ? new URL(text).origin : undefined
}

/** True when a write from `origin` is allowed for a request that named `host`. */
export function sameOrAllowedOrigin (origin: string, host: string, allowed: readonly string[]): boolean {
  if (allowed.includes('*')) return true
  const parsed = originOf(origin)
  if (parsed === undefined || parsed === 'null') return false
  return parsed === originOf(`http://${host}`) || allowed.includes(parsed)
}

const quote = (text: string): string => text.slice(0, QUOTE_MAX)

async function loopbackGuard (app: FastifyInstance, { tokens }: { tokens: unknown }): Promise<void> {
  if (tokens !== undefined || !isLoopback(app.config.host)) return
  const allowed = app.config.corsOrigins
  // The last Host found loopback: clients send the same one on every request.
  let loopbackHost: string | undefined
  // Callback style: this runs on every request of an open server.
  app.addHook('onRequest', function guard (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) {
    const host = req.headers.host ?? ''
    if (host !== loopbackHost) {
      if (!isLoopback(hostName(host))) { done(new MisdirectedHost(quote(host))); return }
      loopbackHost = host
    }
    const origin = req.headers.origin
    if (origin !== undefined && !SAFE_METHODS.has(req.method) && !sameOrAllowedOrigin(origin, host, allowed)) {
      done(new ForeignOrigin(quote(origin)))
      return
    }
    done()
  })
}

export default fp(loopbackGuard, { name: 'loopback-guard', fastify: '5.x' })
