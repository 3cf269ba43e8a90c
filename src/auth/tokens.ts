/**
 * Access tokens: a JSON file of SHA-256 hashes of token secrets, each bound to one tenant with
 * scopes and an optional expiry. The secret itself is shown once, at creation, and never stored.
 * The file is replaced atomically (temp file, fsync, rename, directory fsync) and re-read on
 * `reload()` (SIGHUP), keeping the previous tokens when the new file does not parse. Every
 * writer (the server's `/v1/tokens` and the CLI's `token` command, in any process) changes it
 * in one read-modify-write under the lock file `<file>.lock`, so that no change is undone.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { InvalidArgument, TooManyTokens } from '../errors.js'
import { withLockFile } from '../lock-file.js'
import { FileSessionStorage } from '../storage/file-session-storage.js'
import { writeAtomically } from '../session/write-queue.js'
import { parseTenantSettings, type TenantSettings, type TenantSettingsFile } from './tenant-settings.js'

export type Scope = 'read' | 'write' | 'admin'
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin']

/** Tenant names double as directory names under `DATA_DIR/tenants/`. */
export const TENANT_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/
/** The tenant whose storage root is `DATA_DIR` itself. */
export const DEFAULT_TENANT = 'default'

export interface TokenRecord {
  /** Public identifier (safe to log); not the secret. */
  id: string
  tenant: string
  scopes: Scope[]
  /** Lowercase hex SHA-256 of the secret. */
  sha256: string
  createdAt: string
  /** ISO 8601; absent = never expires. */
  expiresAt?: string
  name?: string
}

/** The token file: its tokens, and the storage settings of tenants (src/auth/tenant-settings.ts). */
export interface TokenFile { version: 1, tokens: TokenRecord[], tenants?: TenantSettingsFile }

/** Who a request is: the token's id, tenant and effective scopes. */
export interface Principal {
  tokenId: string
  tenant: string
  scopes: ReadonlySet<Scope>
  /** When the token expires, in ms since the epoch; absent = never. */
  expiresAt?: number
}

export type Verdict = { ok: true, principal: Principal } | { ok: false, reason: 'unknown' | 'expired' }

export function hashSecret (secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex')
}

/** A new secret: `sst_` + 32 random bytes, base64url. */
export function newSecret (): string {
  return 'sst_' + randomBytes(32).toString('base64url')
}

/** `admin` implies `write`, which implies `read`. */
export function effectiveScopes (scopes: readonly Scope[]): Set<Scope> {
  const set = new Set<Scope>(scopes)
  if (set.has('admin')) set.add('write')
  if (set.has('write')) set.add('read')
  return set
}

/** Parses and checks a token file's text; throws `InvalidArgument` naming what is wrong. */
export function parseTokenFile (text: string): TokenFile {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch {
    throw new InvalidArgument('token file is not valid JSON')
  }
  const tokens = (doc as { tokens?: unknown } | null)?.tokens
  if (!Array.isArray(tokens)) throw new InvalidArgument('token file needs a "tokens" array')
  const tenants = (doc as { tenants?: unknown }).tenants
  return {
    version: 1,
    tokens: tokens.map((t, i) => checkRecord(t, i)),
    ...(tenants === undefined ? {} : { tenants: parseTenantSettings(tenants, TENANT_RE) }),
  }
}

function checkRecord (value: unknown, i: number): TokenRecord {
  const t = value as Partial<TokenRecord> | null
  const bad = (what: string): never => { throw new InvalidArgument(`token ${i}: ${what}`) }
  if (typeof t !== 'object' || t === null) return bad('not an object')
  if (typeof t.id !== 'string' || t.id === '') bad('id must be a non-empty string')
  if (typeof t.tenant !== 'string' || !TENANT_RE.test(t.tenant)) bad(`tenant must match ${TENANT_RE.source}`)
  if (!Array.isArray(t.scopes) || t.scopes.length === 0 || !t.scopes.every((s) => SCOPES.includes(s))) bad('scopes must be a non-empty list of read, write, admin')
  if (typeof t.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(t.sha256)) bad('sha256 must be 64 lowercase hex characters')
  if (t.expiresAt !== undefined && Number.isNaN(Date.parse(t.expiresAt))) bad('expiresAt must be an ISO 8601 date')
  return t as TokenRecord
}

/** The tokens in force, looked up by the hash of a presented secret. */
export class TokenStore {
  readonly #path: string
  #byHash = new Map<string, TokenRecord>()
  #byId = new Map<string, TokenRecord>()
  #tenants: TenantSettingsFile = {}
  readonly #listeners = new Set<() => void>()

  private constructor (path: string) { this.#path = path }

  /** Reads `path`; a missing or invalid file is an error (the server must not start open). */
  static async load (path: string): Promise<TokenStore> {
    const store = new TokenStore(path)
    await store.reload()
    return store
  }

  get path (): string { return this.#path }
  get size (): number { return this.#byHash.size }

  /**
   * Re-reads the file and swaps the tokens in one step, then tells the `onReload` listeners; on
   * any error the old ones stay and nobody is told.
   */
  async reload (): Promise<void> {
    const file = parseTokenFile(await readFile(this.#path, 'utf8'))
    this.#byHash = new Map(file.tokens.map((t) => [t.sha256, t]))
    this.#byId = new Map(file.tokens.map((t) => [t.id, t]))
    this.#tenants = file.tenants ?? {}
    for (const listener of [...this.#listeners]) listener()
  }

  /** The storage settings the file gives `tenant` (none: the server's defaults). */
  settingsOf (tenant: string): TenantSettings | undefined {
    return this.#tenants[tenant]
  }

  /** Tenants the file names, by their tokens or their settings. */
  get tenantNames (): string[] {
    return [...new Set([...Object.keys(this.#tenants), ...[...this.#byId.values()].map((t) => t.tenant)])]
  }

  /** Calls `listener` after every successful reload; returns the function that stops that. */
  onReload (listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  verify (secret: string, now = Date.now()): Verdict {
    const record = this.#byHash.get(hashSecret(secret))
    if (record === undefined) return { ok: false, reason: 'unknown' }
    const expiresAt = expiryOf(record)
    if (expiresAt !== undefined && expiresAt <= now) return { ok: false, reason: 'expired' }
    const principal: Principal = { tokenId: record.id, tenant: record.tenant, scopes: effectiveScopes(record.scopes) }
    if (expiresAt !== undefined) principal.expiresAt = expiresAt
    return { ok: true, principal }
  }

  /**
   * True while the token `tokenId` is in the file with the same tenant and expiry as `principal`
   * was given, and has not expired: what a live stream must keep being to stay open.
   */
  stillValid (principal: Principal, now = Date.now()): boolean {
    const record = this.#byId.get(principal.tokenId)
    if (record === undefined || record.tenant !== principal.tenant) return false
    const expiresAt = expiryOf(record)
    return expiresAt === principal.expiresAt && (expiresAt === undefined || expiresAt > now)
  }
}

function expiryOf (record: TokenRecord): number | undefined {
  return record.expiresAt === undefined ? undefined : Date.parse(record.expiresAt)
}

export interface NewToken { tenant: string, scopes: Scope[], expiresAt?: string, name?: string }

/**
 * Adds a token to the file at `path` (created when missing) and returns its secret, which is
 * stored nowhere. The file is rewritten atomically.
 */
export async function addToken (path: string, input: NewToken, limits: TokenLimits = {}): Promise<{ secret: string, token: TokenRecord }> {
  return await serialized(path, async () => await addTokenNow(path, input, limits))
}

/** Bounds `addToken` checks in the same read-modify-write as the change. */
export interface TokenLimits {
  /** Most tokens one tenant may hold (expired ones count until revoked); absent or 0 = no cap. */
  maxPerTenant?: number
}

async function addTokenNow (path: string, input: NewToken, { maxPerTenant = 0 }: TokenLimits): Promise<{ secret: string, token: TokenRecord }> {
  const file = await readTokenFileOrEmpty(path)
  if (maxPerTenant > 0 && file.tokens.filter((t) => t.tenant === input.tenant).length >= maxPerTenant) {
    throw new TooManyTokens(input.tenant, maxPerTenant)
  }
  const secret = newSecret()
  const token = checkRecord({
    id: `tok_${randomUUID().replaceAll('-', '').slice(0, 16)}`,
    tenant: input.tenant,
    scopes: input.scopes,
    sha256: hashSecret(secret),
    createdAt: new Date().toISOString(),
    ...(input.expiresAt === undefined ? {} : { expiresAt: new Date(input.expiresAt).toISOString() }),
    ...(input.name === undefined ? {} : { name: input.name }),
  }, file.tokens.length)
  await writeTokenFile(path, { ...file, tokens: [...file.tokens, token] })
  return { secret, token }
}

/**
 * Removes the token `id` (only when it belongs to `tenant`, if given) in one read-modify-write;
 * false when there was no such token.
 */
export async function removeToken (path: string, id: string, tenant?: string): Promise<boolean> {
  return await serialized(path, async () => {
    const file = await readTokenFileOrEmpty(path)
    const tokens = file.tokens.filter((t) => t.id !== id || (tenant !== undefined && t.tenant !== tenant))
    if (tokens.length === file.tokens.length) return false
    await writeTokenFile(path, { ...file, tokens })
    return true
  })
}

/** The lock file every writer of the token file at `path` takes. */
export const tokenLockPath = (path: string): string => `${path}.lock`

/**
 * Read-modify-write of one file, one at a time: within this process by a promise chain, across
 * processes by the lock file beside it.
 */
const chains = new Map<string, Promise<unknown>>()
async function serialized<T> (path: string, fn: () => Promise<T>): Promise<T> {
  const locked = async (): Promise<T> => await withLockFile(tokenLockPath(path), fn)
  const run = (chains.get(path) ?? Promise.resolve()).then(locked, locked)
  const tail = run.catch(() => {})
  chains.set(path, tail)
  void tail.then(() => { if (chains.get(path) === tail) chains.delete(path) })
  return await run
}

export async function readTokenFileOrEmpty (path: string): Promise<TokenFile> {
  try {
    return parseTokenFile(await readFile(path, 'utf8'))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, tokens: [] }
    throw err
  }
}

async function writeTokenFile (path: string, file: TokenFile): Promise<void> {
  await writeAtomically(new FileSessionStorage(), path, JSON.stringify(file, null, 2) + '\n')
}
