/**
 * test/contract/openapi-types.d.ts is generated from openapi/openapi.json; this fails when it
 * is stale. Regenerate both with `npm run openapi`.
 */
import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { OPENAPI_DOCUMENT, OPENAPI_TYPES, renderOpenapiTypes } from '../../scripts/openapi-types.js'

it('the committed OpenAPI types match openapi/openapi.json (run `npm run openapi`)', async () => {
  const document = JSON.parse(await readFile(OPENAPI_DOCUMENT, 'utf8')) as object
  const committed = await readFile(OPENAPI_TYPES, 'utf8')
  expect(committed).toBe(await renderOpenapiTypes(document))
})
