/**
 * Schemas of the token-management routes (`/v1/tokens`, admin scope). A token is shown without
 * its hash; the secret appears once, in the answer that creates it. Without AUTH_TOKENS_FILE
 * there are no tokens and every route answers 409 `SS_AUTH_DISABLED`.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { BODY_ERRORS } from '../src/schemas/responses.js'
import { ref } from '../src/schemas/ref.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

const ScopeName = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')], {
  description: '`admin` implies `write`, which implies `read`',
})
const Instant = Type.String({ format: 'date-time', description: 'ISO 8601 instant' })

/** A token as listed: everything but its hash (and never its secret). */
export const Token = Type.Object({
  id: Type.String({ description: 'Public identifier, safe to log' }),
  tenant: Type.String(),
  scopes: Type.Array(ScopeName, { minItems: 1 }),
  createdAt: Instant,
  expiresAt: Type.Optional(Instant),
  name: Type.Optional(Type.String()),
}, { $id: 'Token', additionalProperties: false })

export const TokenList = Type.Object({ tokens: Type.Array(ref(Token)) }, { $id: 'TokenList', additionalProperties: false })

export const CreateTokenBody = Type.Object({
  scopes: Type.Array(ScopeName, { minItems: 1, uniqueItems: true }),
  expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'A future instant; default: never expires' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A label for people' })),
}, { $id: 'CreateTokenBody', additionalProperties: false })

export const CreatedToken = Type.Object({
  secret: Type.String({ description: 'Send as `Authorization: Bearer <secret>`; shown only here' }),
  token: ref(Token),
}, { $id: 'CreatedToken', additionalProperties: false })

/** The named bodies of this file, for `sharedSchemas()`. */
export const tokenRouteComponents = (): TSchema[] => [Token, TokenList, CreateTokenBody, CreatedToken]

export const ListTokens = {
  operationId: 'listTokens',
  tags: ['tokens'],
  summary: "The tokens of the caller's tenant",
  description: 'Every token of the tenant, without hashes or secrets; 409 without AUTH_TOKENS_FILE.',
  response: {
    200: { ...ref(TokenList), description: 'The tokens, oldest first' },
    ...problemResponses(409),
  },
}

export const CreateToken = {
  operationId: 'createToken',
  tags: ['tokens'],
  summary: "Create a token for the caller's tenant",
  description: 'The answer holds the secret; it is stored nowhere and cannot be shown again. ' +
    'The server uses the new token at once.',
  body: ref(CreateTokenBody),
  response: {
    201: { ...ref(CreatedToken), description: 'Created' },
    ...problemResponses(...BODY_ERRORS, 409),
  },
}

export const DeleteToken = {
  operationId: 'deleteToken',
  tags: ['tokens'],
  summary: 'Revoke a token of the caller\'s tenant',
  description: 'A token of another tenant is not found (404). The server stops accepting it at once.',
  params: Type.Object({ id: Type.String({ description: 'The token id' }) }),
  response: {
    204: { description: 'Revoked', type: 'null' },
    ...problemResponses(404, 409),
  },
}
