/**
 * The OpenAPI-client integration suite: a real listening server driven through openapi-fetch
 * over the types generated from openapi/openapi.json. Every answer is checked against the
 * document by the client itself (contract-client.ts); the last tests fail when an operation of
 * the document, or a status it declares, was never exercised.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contractClient, ContractViolation } from './contract-client.js'
import { startContractServer } from './contract-server.js'
import { Coverage, documentedOperations, documentedStatuses } from './openapi-validator.js'
import { accessSuite } from './suites/access.js'
import { blobsHealthSuite } from './suites/blobs-health.js'
import { bodyErrorsSuite } from './suites/body-errors.js'
import { ctx } from './suites/context.js'
import { entriesSuite } from './suites/entries.js'
import { eventsSuite } from './suites/events.js'
import { hygieneSuite } from './suites/hygiene.js'
import { recordsSuite } from './suites/records.js'
import { searchSuite } from './suites/search.js'
import { sessionsSuite } from './suites/sessions.js'

beforeAll(async () => {
  ctx.server = await startContractServer()
  ctx.coverage = new Coverage()
  ctx.client = contractClient(ctx.server.baseUrl, ctx.coverage)
})
afterAll(async () => { await ctx.server?.close() })

describe('the checking client', () => {
  it('rejects an answer the document does not declare', async () => {
    // The document declares no 404 for the health probe; an unknown route answers 404.
    const unchecked = contractClient(`${ctx.server.baseUrl}/nowhere`, new Coverage())
    await expect(unchecked.GET('/healthz')).rejects.toThrow(ContractViolation)
  })
})

sessionsSuite()
entriesSuite()
eventsSuite()
recordsSuite()
blobsHealthSuite()
bodyErrorsSuite()
hygieneSuite()
accessSuite()
searchSuite()

describe('coverage of the document', () => {
  it('called every operation', () => {
    const missing = documentedOperations().filter((op) => !ctx.coverage.operations.has(op))
    expect(missing).toEqual([])
  })

  it('saw every declared status of every operation', () => {
    const missing = documentedStatuses().filter((status) => !ctx.coverage.statuses.has(status))
    expect(missing).toEqual([])
  })
})
