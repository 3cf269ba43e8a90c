import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { buildTestApp } from './helpers/app.js'

it('openapi/openapi.json matches the route schemas (run `npm run openapi` after changing a route)', async () => {
  const app = await buildTestApp()
  try {
    await app.ready()
    const committed: unknown = JSON.parse(await readFile(new URL('../openapi/openapi.json', import.meta.url), 'utf8'))
    expect(JSON.parse(JSON.stringify(app.swagger()))).toEqual(committed)
  } finally {
    await app.close()
  }
})
