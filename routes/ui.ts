/**
 * The live dashboard (API.md "Health and docs"): `GET /` redirects to `/ui/`, the files of the
 * repository's `ui/` folder are served under `/ui/` as they are (plain ES modules and CSS: no
 * build step), and `/ui/sessions/{id}` answers the same `index.html` so that a session page can
 * be linked to and reloaded. The pages are public. Only `GET /` is in the OpenAPI document (it
 * is a route of the contract); the data the pages show comes from `/v1`, which asks for a token
 * when tokens are on.
 */
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from '@sinclair/typebox'
import { requiredHeader } from '../src/schemas/responses.js'

/**
 * Only files from this origin, no inline script or style, no plugins, no framing. Images may be
 * `blob:` (blob bytes fetched with the token) or `data:` (small images stored inline in entries).
 */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * The repository's `ui/` folder: beside `routes/` when run from source, some levels above a
 * compiled `routes/` (`dist/routes/`, or a test build under `node_modules/.cache/`).
 */
export function uiRoot (): string {
  const start = dirname(dirname(fileURLToPath(import.meta.url)))
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'ui', 'index.html'))) return join(dir, 'ui')
    if (dirname(dir) === dir) throw new Error(`the dashboard files are missing: no ui/index.html in ${start} or above`)
  }
}

const hidden = { schema: { hide: true }, config: { scope: 'public' as const } }

const OpenDashboard = {
  operationId: 'openDashboard',
  tags: ['docs'],
  summary: 'Redirects to the live dashboard',
  description: 'Answers `302` to `/ui/`, the dashboard (session list; `/ui/sessions/{id}` one session); needs no credentials.',
  response: {
    302: {
      description: 'Redirect to the dashboard',
      type: 'null',
      headers: { Location: requiredHeader(Type.Literal('/ui/', { description: 'The dashboard' })) },
    },
  },
}

const ui: FastifyPluginAsync = async (app) => {
  // Encapsulated: these headers apply to the dashboard's answers only, not to the API.
  app.addHook('onSend', (_req, reply, payload, done) => {
    reply.header('content-security-policy', UI_CSP)
    reply.header('referrer-policy', 'no-referrer')
    done(null, payload)
  })

  await app.register(fastifyStatic, { root: uiRoot(), prefix: '/ui', redirect: true, index: 'index.html' })

  app.get('/', { schema: OpenDashboard, config: { scope: 'public' } }, async (_req, reply) => await reply.redirect('/ui/', 302))
  // Deep links: the page reads the id from its own URL.
  app.get('/ui/sessions/:id', hidden, async (_req, reply) => await reply.sendFile('index.html'))
}

export default ui
