/**
 * Sessions (API.md "Sessions"): create, list, recent, continue, read, rename, move, fork,
 * import, export and delete. Each handler translates HTTP into one registry call.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { DEFAULT_TENANT } from '../src/auth/tokens.js'
import { RewriteBudgetSpent, UnsupportedMediaType } from '../src/errors.js'
import { ByteBudget } from '../src/http/rewrite-budget.js'
import { TEXT_BODY_TYPES } from '../src/plugins/body-parsers.js'
import type { SessionView } from '../src/registry/session-registry.js'
import {
  ContinueSession, CreateSession, DeleteSession, ExportSession, ForkSession, GetSession, ImportSession,
  ListSessions, MoveSession, PatchSession, RecentSessions,
} from './sessions.schema.js'
import { ReplaceSessionFile } from './records.schema.js'

/** Sends a Session with its `ETag` (and `Location` when it was just created). */
function sendSession (reply: FastifyReply, session: SessionView, status: 200 | 201 = 200): FastifyReply {
  reply.code(status).header('etag', session.etag)
  if (status === 201) reply.header('location', `/v1/sessions/${encodeURIComponent(session.header.id)}`)
  return reply.send(session)
}

/** Import takes JSONL, under a JSONL type or `application/json` (kept as text, body-parsers.ts); anything else is 415. */
const IMPORT_TYPES: readonly string[] = [...TEXT_BODY_TYPES, 'application/json']

async function requireJsonl (req: FastifyRequest): Promise<void> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
  if (!IMPORT_TYPES.includes(type)) throw new UnsupportedMediaType(type)
}

/** A fork may come without a body; the body `null` is a body, and the schema refuses it (400). */
async function defaultBody (req: FastifyRequest): Promise<void> {
  if (req.body === undefined) req.body = {}
}

const sessions: FastifyPluginAsyncTypebox = async (app) => {
  // A title change rewrites the whole file (SPEC.md §6.7): its bytes count against the tenant's MAX_REWRITE_BYTES.
  const rewrites = new ByteBudget(app.config.maxRewriteBytes, app.config.rateLimitWindowMs)
  app.post('', { schema: CreateSession, config: { quota: 'session' } }, async (req, reply) => {
    return sendSession(reply, await req.tenant.registry.create(req.body), 201)
  })

  app.get('', { schema: ListSessions }, async (req) => await req.tenant.registry.list(req.query))

  app.get('/recent', { schema: RecentSessions }, async (req) => {
    return { sessions: await req.tenant.registry.recent(req.query.cwd, req.query.limit) }
  })

  app.post('/continue', { schema: ContinueSession, config: { quota: 'session' } }, async (req, reply) => {
    const { session, created } = await req.tenant.registry.continueRecent(req.body.cwd, req.body.terminalId)
    return sendSession(reply, session, created ? 201 : 200)
  })

  app.post('/import', { schema: ImportSession, config: { quota: 'session' }, onRequest: requireJsonl }, async (req, reply) => {
    return sendSession(reply, await req.tenant.registry.import(req.body, { newId: req.query.newId }), 201)
  })

  app.get('/:id', { schema: GetSession }, async (req, reply) => {
    return sendSession(reply, await req.tenant.registry.get(req.params.id))
  })

  /** Charges a rewrite of `bytes` to the caller's tenant: 429 with `Retry-After` once its budget is spent. */
  const rewriteCharge = (req: FastifyRequest, reply: FastifyReply) => (bytes: number): void => {
    const wait = rewrites.charge(req.principal?.tenant ?? DEFAULT_TENANT, bytes)
    if (wait === 0) return
    reply.header('retry-after', String(wait))
    throw new RewriteBudgetSpent(`${wait} s`)
  }

  app.patch('/:id', { schema: PatchSession }, async (req, reply) => {
    return sendSession(reply, await req.tenant.registry.rename(req.params.id, req.body.title, req.headers['if-match'], rewriteCharge(req, reply)))
  })

  app.post('/:id/move', { schema: MoveSession }, async (req, reply) => {
    return sendSession(reply, await req.tenant.registry.move(req.params.id, req.body.cwd, req.headers['if-match']))
  })

  app.post('/:id/fork', { schema: ForkSession, config: { quota: 'session' }, preValidation: defaultBody }, async (req, reply) => {
    const session = await req.tenant.registry.fork(req.params.id, req.body.leafId, req.headers['if-match'])
    return sendSession(reply, session, 201)
  })

  app.get('/:id/export', { schema: ExportSession }, async (req, reply) => {
    const { value, etag } = await req.tenant.registry.exportStream(req.params.id, req.query.images)
    reply.type('application/x-ndjson; charset=utf-8').header('etag', etag)
    return await reply.sendDownload({ size: value.size, body: value.chunks, close: value.close })
  })

  app.put('/:id/file', { schema: ReplaceSessionFile, config: { quota: 'file' }, onRequest: requireJsonl }, async (req, reply) => {
    const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = req.headers
    const charge = rewriteCharge(req, reply)
    const { session, created } = await req.tenant.registry.replaceFile(req.params.id, req.body, { ifMatch, ifNoneMatch, charge })
    return sendSession(reply, session, created ? 201 : 200)
  })

  app.delete('/:id', { schema: DeleteSession }, async (req, reply) => {
    await req.tenant.registry.delete(req.params.id, req.headers['if-match'])
    return reply.code(204).send()
  })
}

export default sessions
