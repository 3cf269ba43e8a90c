/**
 * What the OpenAPI document tells a client generator: every operation named as the SDK names
 * it, tagged and described; every entry type, request and response body a named component;
 * blob bytes as binary; auth required when the server has tokens; and none of the shapes that
 * make model generators fail (a bare union as a request body, two schemas that would get one
 * class name). The limits the server enforces are held against the document in enforced.test.ts.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { SessionStoreClient } from '../../src/client/client.js'
import { ENTRY_TYPES } from '../../src/session/types.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { className, collidingNames, unionBodies } from './generated-names.js'

type Json = Record<string, any>

const document: Json = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8'))
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']

const operations = (doc: Json): Array<{ method: string, path: string, op: Json }> =>
  Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).filter(([method]) => METHODS.includes(method)).map(([method, op]) => ({ method, path, op: op as Json })))

/** SDK methods that are not one HTTP operation, and the one the document names as the issue of record asks. */
const CLIENT_ONLY = new Set(['constructor', 'close', 'allEntries'])
const SDK_TO_OPERATION: Record<string, string> = { append: 'appendEntries', search: 'searchSessions' }
/** Operations the SDK has no method for. */
const DOCUMENT_ONLY = new Set(['getOpenapiDocument', 'getDocs', 'openDashboard', 'getMetrics', 'listTokens', 'createToken', 'deleteToken'])

describe('operations', () => {
  it('every operation has a unique operationId, tags from the list, a summary and a description', () => {
    const tags = new Set((document.tags as Json[]).map((tag) => tag.name))
    const ids = operations(document).map(({ op }) => op.operationId)
    expect(new Set(ids).size).toBe(ids.length)
    for (const { method, path, op } of operations(document)) {
      const where = `${method.toUpperCase()} ${path}`
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z]+$/)
      expect(op.tags?.length, where).toBeGreaterThan(0)
      for (const tag of op.tags as string[]) expect(tags.has(tag), `${where}: tag ${tag}`).toBe(true)
      expect(op.summary, where).toMatch(/\S/)
      expect(op.description, where).toMatch(/\S/)
    }
  })

  it('operationIds are the SDK method names, and every SDK call has its operation', () => {
    const sdk = Object.getOwnPropertyNames(SessionStoreClient.prototype).filter((name) => !CLIENT_ONLY.has(name))
    const expected = sdk.map((name) => SDK_TO_OPERATION[name] ?? name).sort()
    const ids = operations(document).map(({ op }) => op.operationId as string).filter((id) => !DOCUMENT_ONLY.has(id)).sort()
    expect(ids).toEqual(expected)
    expect(operations(document).find(({ method, path }) => method === 'head' && path === '/v1/blobs/sha256/{hex}')?.op.operationId).toBe('hasBlob')
  })

  it('names servers and a license', () => {
    expect(document.servers).toEqual([expect.objectContaining({ url: expect.stringMatching(/^https?:\/\//) })])
    expect(document.info.license).toEqual({ name: 'MIT', identifier: 'MIT' })
  })
})

describe('components', () => {
  const schemas = document.components.schemas as Json
  const pascal = (type: string): string => className(type)

  it('has a stored and a new component per entry type, and unions of them as Entry and NewEntry', () => {
    for (const type of ENTRY_TYPES) {
      expect(schemas[`${pascal(type)}Entry`]?.properties?.type, type).toEqual({ type: 'string', enum: [type] })
      expect(schemas[`New${pascal(type)}Entry`]?.properties?.type, type).toEqual({ type: 'string', enum: [type] })
    }
    expect(schemas.Entry.anyOf).toEqual([...ENTRY_TYPES.map((t) => ({ $ref: `#/components/schemas/${pascal(t)}Entry` })), { $ref: '#/components/schemas/OtherEntry' }])
    expect(schemas.NewEntry.anyOf).toEqual([...ENTRY_TYPES.map((t) => ({ $ref: `#/components/schemas/New${pascal(t)}Entry` })), { $ref: '#/components/schemas/NewOtherEntry' }])
  })

  it('names every JSON request body and every JSON success body', () => {
    for (const { method, path, op } of operations(document)) {
      const body = op.requestBody?.content?.['application/json']?.schema
      if (body !== undefined) expect(body, `${method} ${path} body`).toEqual({ $ref: expect.stringMatching(/^#\/components\/schemas\//) })
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const schema = (response as Json).content?.['application/json']?.schema
        if (status.startsWith('2') && schema !== undefined && path !== '/openapi.json') {
          expect(schema, `${method} ${path} ${status}`).toEqual({ $ref: expect.stringMatching(/^#\/components\/schemas\//) })
        }
      }
    }
  })

  it('describes the append body as the batch object', () => {
    const append = document.paths['/v1/sessions/{id}/entries'].post
    expect(append.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AppendEntriesBody' })
    expect(schemas.AppendEntriesBody.required).toEqual(['entries'])
  })

  it('types blob bytes as binary strings', () => {
    const bodies = [document.paths['/v1/blobs/sha256/{hex}'].put, document.paths['/v1/blobs'].post]
      .flatMap((op: Json) => Object.values(op.requestBody.content as Json).map((media) => (media as Json).schema))
    const served = Object.values(document.paths['/v1/blobs/sha256/{hex}'].get.responses[200].content as Json).map((media) => (media as Json).schema)
    for (const schema of [...bodies, ...served]) expect(schema).toMatchObject({ type: 'string', format: 'binary' })
  })
})

describe('shapes model generators fail on', () => {
  it('no request body is a bare union', () => {
    expect(unionBodies(document)).toEqual([])
    const union = { paths: { '/x': { post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/U' } } } } } } }, components: { schemas: { U: { anyOf: [{ type: 'string' }] } } } }
    expect(unionBodies(union)).toEqual(['POST /x application/json'])
  })

  it('no two schemas get one generated class name', () => {
    expect(collidingNames(document)).toEqual({})
    const colliding = {
      components: { schemas: { CustomMessage: { type: 'object' }, Custom: { type: 'object', properties: { message: { type: 'object', properties: {} } } } } },
      paths: { '/x': { post: { operationId: 'x', requestBody: { content: { 'application/json': { schema: { anyOf: [{ title: 'custom_message', type: 'object' }] } } } } } } },
    }
    expect(Object.keys(collidingNames(colliding))).toEqual(['CustomMessage'])
    expect(collidingNames(colliding).CustomMessage).toHaveLength(3)
  })
})

describe('security', () => {
  let tokens: TokenFixture
  let app: App
  beforeAll(async () => {
    tokens = await tokenFixture()
    app = await buildTestApp({ tokens: await tokens.load() })
  })
  afterAll(async () => {
    await app.close()
    tokens.cleanup()
  })

  it('the committed document (open mode) allows anonymous calls', () => {
    expect(document.security).toEqual([{ bearerAuth: [] }, {}])
  })

  it('a server with tokens serves a document that requires them, except on public routes', async () => {
    const res = await app.inject({ method: 'GET', url: '/openapi.json', headers: bearer(tokens.secrets.read) })
    expect(res.statusCode).toBe(200)
    const served = res.json() as Json
    expect(served.security).toEqual([{ bearerAuth: [] }])
    for (const { method, path, op } of operations(served)) {
      const security = (op.security ?? served.security) as Json[]
      const isPublic = ['/', '/healthz', '/readyz', '/metrics', '/openapi.json', '/docs'].includes(path)
      expect(security, `${method} ${path}`).toEqual(isPublic ? [] : expect.not.arrayContaining([{}]))
      if (!isPublic) expect(security.length, `${method} ${path}`).toBeGreaterThan(0)
    }
  })

  it('leaves the document of an open server in the same process as it was', async () => {
    expect((await app.inject({ method: 'GET', url: '/openapi.json', headers: bearer(tokens.secrets.read) })).statusCode).toBe(200)
    const open = await buildTestApp()
    try {
      await open.ready()
      const served = JSON.parse(JSON.stringify(open.swagger())) as Json
      for (const { method, path, op } of operations(served)) {
        const committed = document.paths[path][method] as Json
        expect(op.security, `${method} ${path}`).toEqual(committed.security)
      }
    } finally {
      await open.close()
    }
  })
})
