/**
 * Token management for admins (`/v1/tokens`, scope `admin`): list, create and revoke the tokens
 * of the caller's own tenant. Changes go to AUTH_TOKENS_FILE (atomically) and the server reloads
 * its tokens before answering, so a new token works and a revoked one stops at once. Without
 * AUTH_TOKENS_FILE the routes exist but answer 409 `SS_AUTH_DISABLED`: open mode has no tokens.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { addToken, DEFAULT_TENANT, readTokenFileOrEmpty, removeToken, type TokenRecord, type TokenStore } from '../src/auth/tokens.js'
import { AuthDisabled, InvalidArgument, TokenNotFound } from '../src/errors.js'
import { CreateToken, DeleteToken, ListTokens } from './tokens.schema.js'

/** A token without its hash. */
export function tokenView ({ sha256: _hash, ...view }: TokenRecord): Omit<TokenRecord, 'sha256'> {
  return view
}

const tenantOf = (req: FastifyRequest): string => req.principal?.tenant ?? DEFAULT_TENANT
const ADMIN = { scope: 'admin' } as const

const tokens: FastifyPluginAsyncTypebox = async (app) => {
  const store = (): TokenStore => {
    if (app.tokens === null) throw new AuthDisabled()
    return app.tokens
  }

  app.get('', { schema: ListTokens, config: ADMIN }, async (req) => {
    const file = await readTokenFileOrEmpty(store().path)
    return { tokens: file.tokens.filter((t) => t.tenant === tenantOf(req)).map(tokenView) }
  })

  app.post('', { schema: CreateToken, config: ADMIN }, async (req, reply) => {
    const tokens = store()
    const { expiresAt } = req.body
    // A leap second (`23:59:60`) is a valid date-time that no Date can hold.
    if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt))) throw new InvalidArgument(`expiresAt ${expiresAt} is not an instant this server can represent`)
    if (expiresAt !== undefined && Date.parse(expiresAt) <= Date.now()) throw new InvalidArgument('expiresAt must be in the future')
    const { secret, token } = await addToken(tokens.path, { ...req.body, tenant: tenantOf(req) }, { maxPerTenant: app.config.maxTokensPerTenant })
    await tokens.reload()
    req.log.info({ tokenId: token.id, tenant: token.tenant, scopes: token.scopes }, 'token created')
    return reply.code(201).send({ secret, token: tokenView(token) })
  })

  app.delete('/:id', { schema: DeleteToken, config: ADMIN }, async (req, reply) => {
    const tokens = store()
    const { id } = req.params
    if (!await removeToken(tokens.path, id, tenantOf(req))) throw new TokenNotFound(id)
    await tokens.reload()
    req.log.info({ tokenId: id, tenant: tenantOf(req) }, 'token revoked')
    return reply.code(204).send()
  })
}

export default tokens
