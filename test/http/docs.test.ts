import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { problemOf } from '../helpers/problem.js'

describe('docs routes', () => {
  let app: App
  beforeEach(async () => { app = await buildTestApp() })
  afterEach(async () => { await app.close() })

  it('GET /openapi.json serves the generated OpenAPI 3.1 document', async () => {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    const doc = res.json()
    expect(doc).toEqual(JSON.parse(JSON.stringify(app.swagger())))
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.components.schemas.Problem).toMatchObject({ type: 'object', required: ['type', 'title', 'status', 'code'] })
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/v1/blobs', '/v1/blobs/sha256/{hex}']))
    expect(Object.keys(doc.paths['/openapi.json'].get.responses['200'].content)).toEqual(['application/json'])
    expect(Object.keys(doc.paths['/docs'].get.responses['200'].content)).toEqual(['text/html'])
  })

  it('documents error responses as application/problem+json referencing Problem', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const notFound = doc.paths['/v1/blobs/sha256/{hex}'].get.responses['404']
    expect(notFound.content).toEqual({ 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } })
  })

  it('GET /docs serves the HTML reference', async () => {
    const res = await app.inject({ method: 'GET', url: '/docs' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.body).toContain('<html')
  })

  it('GET /docs answers the errors it documents: 421 to a foreign Host, 429 past PUBLIC_RATE_LIMIT_MAX', async () => {
    const documented = Object.keys((await app.inject({ method: 'GET', url: '/openapi.json' })).json().paths['/docs'].get.responses)
    expect(documented).toEqual(['200', '421', '429'])
    const foreign = await app.inject({ method: 'GET', url: '/docs', headers: { host: 'rebound.example:8787' } })
    expect(problemOf(foreign)).toEqual({ status: 421, code: 'SS_MISDIRECTED_HOST' })
    const limited = await buildTestApp({ config: { publicRateLimitMax: 1 } })
    try {
      expect((await limited.inject({ method: 'GET', url: '/docs' })).statusCode).toBe(200)
      const over = await limited.inject({ method: 'GET', url: '/docs' })
      expect(problemOf(over)).toEqual({ status: 429, code: 'SS_RATE_LIMITED' })
      expect(over.headers['retry-after']).toMatch(/^[1-9]\d*$/)
    } finally {
      await limited.close()
    }
  })
})
