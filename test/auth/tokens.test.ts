import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { addToken, effectiveScopes, hashSecret, parseTokenFile, removeToken, TokenStore } from '../../src/auth/tokens.js'

let dir: string
let path: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ss-tokens-'))
  path = join(dir, 'tokens.json')
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('token file', () => {
  it('addToken returns the secret once and stores only its SHA-256', async () => {
    const { secret, token } = await addToken(path, { tenant: 'acme', scopes: ['read', 'write'] })
    expect(secret).toMatch(/^sst_[A-Za-z0-9_-]{43}$/)
    const text = readFileSync(path, 'utf8')
    expect(text).not.toContain(secret)
    expect(token.sha256).toBe(hashSecret(secret))
    expect(parseTokenFile(text).tokens).toEqual([token])
  })

  it('concurrent adds all land; removeToken drops one and reports unknown ids', async () => {
    const made = await Promise.all(Array.from({ length: 10 }, async (_, i) => await addToken(path, { tenant: `t${i}`, scopes: ['read'] })))
    expect(parseTokenFile(readFileSync(path, 'utf8')).tokens).toHaveLength(10)
    expect(await removeToken(path, made[3]!.token.id)).toBe(true)
    expect(await removeToken(path, made[3]!.token.id)).toBe(false)
    // Scoped to a tenant, another tenant's token is not found and stays.
    const t5 = made[5]!.token.id
    expect(await removeToken(path, t5, 't0')).toBe(false)
    expect(parseTokenFile(readFileSync(path, 'utf8')).tokens.map((t) => t.id)).toContain(t5)
    expect(await removeToken(path, t5, 't5')).toBe(true)
    expect(parseTokenFile(readFileSync(path, 'utf8')).tokens.map((t) => t.tenant)).not.toContain('t3')
  })

  it('rejects malformed files naming the problem', () => {
    expect(() => parseTokenFile('nope')).toThrow('not valid JSON')
    expect(() => parseTokenFile('{}')).toThrow('"tokens" array')
    const good = { id: 'a', tenant: 'acme', scopes: ['read'], sha256: 'a'.repeat(64), createdAt: '2026-01-01T00:00:00.000Z' }
    expect(() => parseTokenFile(JSON.stringify({ tokens: [{ ...good, tenant: '../x' }] }))).toThrow('tenant')
    expect(() => parseTokenFile(JSON.stringify({ tokens: [{ ...good, scopes: ['root'] }] }))).toThrow('scopes')
    expect(() => parseTokenFile(JSON.stringify({ tokens: [{ ...good, sha256: 'XY' }] }))).toThrow('sha256')
    expect(() => parseTokenFile(JSON.stringify({ tokens: [{ ...good, expiresAt: 'soon' }] }))).toThrow('expiresAt')
  })
})

describe('tenant settings in the token file', () => {
  it('are read beside the tokens, checked, and kept by every change of the tokens', async () => {
    const tenants = { acme: { retention: { days: 30, keepLabelled: true }, quota: { bytes: 1000, sessions: 5 } }, globex: {} }
    await addToken(path, { tenant: 'acme', scopes: ['read'] })
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), tenants }))
    const { token } = await addToken(path, { tenant: 'globex', scopes: ['admin'] })
    expect(await removeToken(path, token.id)).toBe(true)
    expect(parseTokenFile(readFileSync(path, 'utf8')).tenants).toEqual(tenants)
    const store = await TokenStore.load(path)
    expect(store.settingsOf('acme')).toEqual(tenants.acme)
    expect(store.settingsOf('initech')).toBeUndefined()
    expect(store.tenantNames.sort()).toEqual(['acme', 'globex'])
  })

  it('refuse a file whose settings are wrong, naming the setting', () => {
    const file = (tenants: unknown): string => JSON.stringify({ tokens: [], tenants })
    expect(parseTokenFile(file(undefined)).tenants).toBeUndefined()
    expect(() => parseTokenFile(file([]))).toThrow('tenants must be an object')
    expect(() => parseTokenFile(file({ '../x': {} }))).toThrow("'../x' is not a tenant name")
    expect(() => parseTokenFile(file({ acme: { quota: { bytes: -1 } } }))).toThrow('tenants.acme.quota.bytes')
    expect(() => parseTokenFile(file({ acme: { quota: { sessions: 1.5 } } }))).toThrow('tenants.acme.quota.sessions')
    expect(() => parseTokenFile(file({ acme: { retention: { days: 100_000 } } }))).toThrow('tenants.acme.retention.days')
    expect(() => parseTokenFile(file({ acme: { retention: { keepLabelled: 'yes' } } }))).toThrow('keepLabelled')
  })
})

describe('TokenStore', () => {
  it('verifies known secrets, refuses unknown and expired ones', async () => {
    const live = await addToken(path, { tenant: 'acme', scopes: ['write'] })
    const old = await addToken(path, { tenant: 'acme', scopes: ['read'], expiresAt: '2020-01-01T00:00:00Z' })
    const store = await TokenStore.load(path)
    const verdict = store.verify(live.secret)
    expect(verdict.ok && verdict.principal.tenant).toBe('acme')
    expect(verdict.ok && [...verdict.principal.scopes].sort()).toEqual(['read', 'write'])
    expect(store.verify(old.secret)).toEqual({ ok: false, reason: 'expired' })
    expect(store.verify('sst_wrong')).toEqual({ ok: false, reason: 'unknown' })
  })

  it('reload picks up new tokens and keeps the old ones when the file breaks', async () => {
    const first = await addToken(path, { tenant: 'acme', scopes: ['read'] })
    const store = await TokenStore.load(path)
    const second = await addToken(path, { tenant: 'acme', scopes: ['read'] })
    expect(store.verify(second.secret).ok).toBe(false)
    await store.reload()
    expect(store.verify(second.secret).ok).toBe(true)
    writeFileSync(path, '{ broken')
    await expect(store.reload()).rejects.toThrow('not valid JSON')
    expect(store.verify(first.secret).ok).toBe(true)
    expect(store.size).toBe(2)
  })

  it('admin implies write implies read', () => {
    expect([...effectiveScopes(['admin'])].sort()).toEqual(['admin', 'read', 'write'])
    expect([...effectiveScopes(['write'])].sort()).toEqual(['read', 'write'])
    expect([...effectiveScopes(['read'])]).toEqual(['read'])
  })
})
