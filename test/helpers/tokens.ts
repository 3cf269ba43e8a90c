/**
 * A token file for tests: tenant `acme` with a read, a write, an admin and an expired token,
 * tenant `globex` with an admin token. Secrets are returned by name; the file holds hashes.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { addToken, TokenStore, type NewToken } from '../../src/auth/tokens.js'

export const TOKEN_SPECS = {
  read: { tenant: 'acme', scopes: ['read'] },
  write: { tenant: 'acme', scopes: ['write'] },
  admin: { tenant: 'acme', scopes: ['admin'] },
  expired: { tenant: 'acme', scopes: ['admin'], expiresAt: '2020-01-01T00:00:00.000Z' },
  globex: { tenant: 'globex', scopes: ['admin'] },
} satisfies Record<string, NewToken>

export type TokenName = keyof typeof TOKEN_SPECS

export interface TokenFixture {
  dir: string
  path: string
  /** Secrets by name. */
  secrets: Record<TokenName, string>
  /** Token ids by name. */
  ids: Record<TokenName, string>
  /** A TokenStore over the file. */
  load: () => Promise<TokenStore>
  cleanup: () => void
}

export async function tokenFixture (): Promise<TokenFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'ss-auth-'))
  const path = join(dir, 'tokens.json')
  const secrets = {} as Record<TokenName, string>
  const ids = {} as Record<TokenName, string>
  for (const [name, spec] of Object.entries(TOKEN_SPECS) as Array<[TokenName, NewToken]>) {
    const { secret, token } = await addToken(path, spec)
    secrets[name] = secret
    ids[name] = token.id
  }
  return { dir, path, secrets, ids, load: async () => await TokenStore.load(path), cleanup: () => { rmSync(dir, { recursive: true, force: true }) } }
}

/** `Authorization` header of `secret`. */
export const bearer = (secret: string): Record<string, string> => ({ authorization: `Bearer ${secret}` })
