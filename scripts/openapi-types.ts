/**
 * TypeScript types of the HTTP contract, generated from openapi/openapi.json by
 * openapi-typescript (the same output as its CLI), for the OpenAPI-client suite in
 * test/contract/. `npm run openapi` writes them with the document; run this file with
 * `npx tsx scripts/openapi-types.ts` to regenerate the types alone. A test fails when the
 * committed file is stale.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript'

export const OPENAPI_DOCUMENT = new URL('../openapi/openapi.json', import.meta.url)
export const OPENAPI_TYPES = new URL('../test/contract/openapi-types.d.ts', import.meta.url)

/** The generated `.d.ts` text for `document`. */
export async function renderOpenapiTypes (document: object): Promise<string> {
  return COMMENT_HEADER + astToString(await openapiTS(structuredClone(document) as OpenAPI3, { silent: true }))
}

/** Writes the types of the committed document next to the suite that uses them. */
export async function writeOpenapiTypes (): Promise<void> {
  const document = JSON.parse(await readFile(OPENAPI_DOCUMENT, 'utf8')) as object
  await writeFile(OPENAPI_TYPES, await renderOpenapiTypes(document))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeOpenapiTypes()
  process.stdout.write(`wrote ${fileURLToPath(OPENAPI_TYPES)}\n`)
}
