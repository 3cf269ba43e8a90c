/**
 * A `__proto__` (or `constructor.prototype`) key in a JSON body is plain data, as it is in an
 * imported session file: the entry is stored and returned with the key as its own property, and
 * no prototype is changed on the way. At the top level of an appended entry, where no entry type
 * has such a field, it is refused with 400 naming it, never dropped.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { createSession, persistedSession } from './session-helpers.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

const JSON_TYPE = { 'content-type': 'application/json' }
const RAW_DATA = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"keep":1}'

function expectNoPollution (): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  expect(Object.prototype).not.toHaveProperty('polluted')
}

/** `data` of a stored entry as raw JSON text, so that the key is seen as sent, not re-parsed. */
function expectProtoKeyAsData (entryJson: string): void {
  const data = JSON.parse(entryJson).data as object
  expect(Object.hasOwn(data, '__proto__')).toBe(true)
  expect(Object.getPrototypeOf(data)).toBe(Object.prototype)
  expect(Object.getOwnPropertyDescriptor(data, '__proto__')?.value).toEqual({ polluted: 'yes' })
  expect(data).toMatchObject({ keep: 1, constructor: { prototype: { polluted: 'yes' } } })
}

it('appends an entry whose data holds a __proto__ key, and returns the key as data', async () => {
  const s = await createSession(app)
  const id = s.header.id
  const payload = `{"type":"custom","customType":"x","data":${RAW_DATA}}`
  const res = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/entries`, headers: JSON_TYPE, payload })
  expect(res.statusCode, res.body).toBe(201)
  const entryId = res.json().entries[0].id as string
  expect(res.body).toContain('"__proto__":{"polluted":"yes"}')
  const read = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries/${entryId}` })
  expect(read.statusCode).toBe(200)
  expectProtoKeyAsData(read.body)
  expectNoPollution()
})

it('accepts the same key in a batch, as the import of the same entry does', async () => {
  const { session } = await persistedSession(app)
  const id = session.header.id
  const payload = `{"entries":[{"type":"custom","customType":"x","data":${RAW_DATA}}]}`
  const res = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/entries`, headers: JSON_TYPE, payload })
  expect(res.statusCode, res.body).toBe(201)
  const exported = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/export` })
  const line = exported.body.trim().split('\n').at(-1) as string
  expectProtoKeyAsData(line)

  await app.inject({ method: 'DELETE', url: `/v1/sessions/${id}` })
  const imported = await app.inject({ method: 'POST', url: '/v1/sessions/import', headers: { 'content-type': 'application/x-ndjson' }, payload: exported.body })
  expect(imported.statusCode, imported.body).toBe(201)
  const again = await app.inject({ method: 'GET', url: `/v1/sessions/${id}/export` })
  expect(again.body).toBe(exported.body)
  expectNoPollution()
})

it('accepts the key at the top level of a body, where the schema then judges it', async () => {
  const res = await app.inject({ method: 'POST', url: '/v1/sessions', headers: JSON_TYPE, payload: '{"cwd":"/p","__proto__":{"x":1}}' })
  expect(res.statusCode).toBe(400)
  expect(res.json()).toMatchObject({ code: 'SS_VALIDATION' })
  expectNoPollution()
})

it('refuses a __proto__ key at the top level of an appended entry, naming it, rather than dropping it', async () => {
  const { session } = await persistedSession(app)
  const id = session.header.id
  const before = (await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries` })).json().total as number
  for (const payload of [
    '{"type":"custom","customType":"x","__proto__":{"polluted":"yes"},"data":1}',
    '{"entries":[{"type":"custom","customType":"x","data":1},{"type":"custom","customType":"x","__proto__":{"polluted":"yes"}}]}',
  ]) {
    const res = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/entries`, headers: JSON_TYPE, payload })
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json()).toMatchObject({ code: 'SS_VALIDATION' })
    expect(res.json().detail).toMatch(/^entries\/\d\/__proto__ /)
  }
  const after = (await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries` })).json().total as number
  expect(after).toBe(before)
  expectNoPollution()
})
