/**
 * Server configuration from the environment (API.md "Running"). Every value is checked once at
 * start-up; an invalid one fails with `SS_INVALID_CONFIG` naming the variable.
 * An empty variable counts as unset.
 */
import { resolve } from 'node:path'
import { InvalidConfig } from './errors.js'
import type { RegistryLimits } from './registry/registry-core.js'
import type { StorageKind } from './storage/index.js'
import { DEFAULT_DATABASE_TIMEOUT_MS } from './storage/postgres/pool.js'
import { DEFAULT_UNSAVED_MAX_AGE_MS } from './storage/postgres/pg-purge.js'

export type { StorageKind }
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface Config {
  /** TCP port; 0 lets the OS choose (the chosen one is logged). */
  port: number
  host: string
  /** Absolute path of the data root (SPEC.md §2.1). */
  dataDir: string
  storage: StorageKind
  /** `DATABASE_URL`: the PostgreSQL database of `STORAGE=postgres` (set exactly then). */
  databaseUrl?: string
  /**
   * `DATABASE_TIMEOUT_MS`, with `STORAGE=postgres`: the longest an operation waits for the
   * database (a connection, one statement, an append in all) before it answers 503.
   */
  databaseTimeoutMs?: number
  logLevel: LogLevel
  /** Largest request body in bytes. */
  bodyLimit: number
  /** Most sessions the registry keeps loaded at once (per tenant). */
  maxOpenSessions: number
  /** Bytes of session data the registry keeps loaded before it evicts (per tenant); 0 = no budget. */
  maxOpenSessionBytes: number
  /** Sessions without an assistant message (held in memory only) per tenant; 0 = no cap. */
  maxUnsavedSessions: number
  /** Bytes one unsaved session may hold in memory (413 beyond); 0 = no cap. */
  maxUnsavedSessionBytes: number
  /** Entries one unsaved session may hold in memory (413 beyond); 0 = no cap. */
  maxUnsavedSessionEntries: number
  /** With `STORAGE=postgres`: ms after its last change an unsaved session is purged from the database. */
  unsavedSessionMaxAgeMs: number
  /** Absolute path of the token file (src/auth/tokens.ts). Unset: open access, one tenant. */
  authTokensFile?: string
  /** Serve without tokens on a non-loopback HOST anyway. */
  allowUnauthenticated: boolean
  /** Requests per client (its token, else its IP) per window; 0 = no rate limit. */
  rateLimitMax: number
  /** Requests per client IP per window to the public routes (/healthz, /readyz, /openapi.json, /docs); 0 = no limit. */
  publicRateLimitMax: number
  /** The rate limit's window in ms. */
  rateLimitWindowMs: number
  /** Live SSE streams one token may hold open at once; 0 = no cap. */
  maxSsePerToken: number
  /** Requests per tenant (all its tokens together) per window; 0 = no tenant rate limit. */
  rateLimitTenantMax: number
  /** Live SSE streams one tenant (all its tokens together) may hold open at once; 0 = no cap. */
  maxSsePerTenant: number
  /** Bytes of streamed answers (blobs, exports) one client may have in flight; 0 = no budget. */
  maxDownloadBytesPerToken: number
  /** Tokens one tenant may hold (`POST /v1/tokens` beyond: 409); 0 = no cap. */
  maxTokensPerTenant: number
  /** Most entries one append batch may carry (413 beyond); 0 = no cap (API.md: only BODY_LIMIT). */
  maxBatchEntries: number
  /** `SEARCH_INDEX`: keep the search index (disk, memory) or drain the search queue (postgres) on this server. */
  searchIndex: boolean
  /**
   * Bytes of session files that title changes (`PATCH`, a whole-file rewrite each) may rewrite
   * per tenant per RATE_LIMIT_WINDOW_MS; 0 = no cap.
   */
  maxRewriteBytes: number
  /** Mean event-loop delay in ms beyond which requests are shed with 503; 0 = never. */
  maxEventLoopDelayMs: number
  /** A request must arrive whole (headers and body) within this many ms, else 408 and closed. */
  requestTimeoutMs: number
  /** A request's headers must arrive within this many ms (at most `requestTimeoutMs`). */
  headersTimeoutMs: number
  /** A request body that brings less than 1 KiB in this many ms (and does not end) is cut with 408. */
  bodyStallTimeoutMs: number
  /** A socket idle this long is closed (live streams excepted). */
  connectionTimeoutMs: number
  /** An idle keep-alive socket is closed after this many ms. */
  keepAliveTimeoutMs: number
  /** Open sockets in total; 0 = no cap. Lowered at start to what the descriptor limit allows (src/http/descriptor-limit.ts). */
  maxConnections: number
  /** Open sockets from one client address; 0 = no cap. Lowered at start to half the total cap in force. */
  maxConnectionsPerClient: number
  /** Origins CORS allows: `[]` = CORS off, `['*']` = any origin (without credentials). */
  corsOrigins: string[]
  /** Ms between collections of every tenant's unreferenced blobs; 0 = only on demand. */
  blobGcIntervalMs: number
  /** Ms a blob put and not referenced yet is kept by a collection. */
  blobGcGraceMs: number
  /** Default retention: sessions unchanged for this many days are deleted; 0 = kept forever. */
  retentionDays: number
  /** Default retention keeps sessions that hold a label. */
  retentionKeepLabelled: boolean
  /** Ms between applications of every tenant's retention. */
  retentionIntervalMs: number
  /** Default quota of bytes (sessions and blobs) per tenant; 0 = none. */
  quotaBytes: number
  /** Default quota of sessions per tenant; 0 = none. */
  quotaSessions: number
}

const MIB = 1024 * 1024

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

type Env = Record<string, string | undefined>

function read (env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

function integer (env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name)
  if (raw === undefined) return fallback
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidConfig(name, `expected an integer from ${min} to ${max}, got '${raw}'`)
  }
  return value
}

function storageKind (env: Env): StorageKind {
  const raw = read(env, 'STORAGE') ?? 'disk'
  if (raw === 'disk' || raw === 'memory' || raw === 'postgres') return raw
  throw new InvalidConfig('STORAGE', `expected 'disk', 'memory' or 'postgres', got '${raw}'`)
}

/** `DATABASE_URL`, required with `STORAGE=postgres` (a `postgres://` or `postgresql://` URL), ignored otherwise. */
function databaseUrl (env: Env, storage: StorageKind): { databaseUrl?: string, databaseTimeoutMs?: number } {
  if (storage !== 'postgres') return {}
  const raw = read(env, 'DATABASE_URL')
  if (raw === undefined) throw new InvalidConfig('DATABASE_URL', 'required with STORAGE=postgres, e.g. postgres://user@host:5432/sessions')
  const protocol = URL.canParse(raw) ? new URL(raw).protocol : undefined
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    throw new InvalidConfig('DATABASE_URL', 'expected a postgres:// or postgresql:// URL')
  }
  return { databaseUrl: raw, databaseTimeoutMs: integer(env, 'DATABASE_TIMEOUT_MS', DEFAULT_DATABASE_TIMEOUT_MS, 100, 600_000) }
}

function logLevel (env: Env): LogLevel {
  const raw = read(env, 'LOG_LEVEL') ?? 'info'
  const level = LOG_LEVELS.find((l) => l === raw)
  if (level === undefined) {
    throw new InvalidConfig('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got '${raw}'`)
  }
  return level
}

function flag (env: Env, name: string): boolean {
  const raw = read(env, name)
  if (raw === undefined || raw === '0' || raw === 'false') return false
  if (raw === '1' || raw === 'true') return true
  throw new InvalidConfig(name, `expected 1 or 0 (true or false), got '${raw}'`)
}

/** `CORS_ORIGINS`: comma-separated origins (`https://app.example.com`), or `*` alone. */
function corsOrigins (env: Env): string[] {
  const raw = read(env, 'CORS_ORIGINS')
  if (raw === undefined) return []
  const origins = raw.split(',').map((o) => o.trim()).filter((o) => o !== '')
  if (origins.includes('*')) {
    if (origins.length > 1) throw new InvalidConfig('CORS_ORIGINS', "'*' allows every origin and cannot be combined with others")
    return ['*']
  }
  for (const origin of origins) {
    const parsed = URL.canParse(origin) ? new URL(origin) : undefined
    if (parsed === undefined || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw new InvalidConfig('CORS_ORIGINS', `'${origin}' is not an origin like https://app.example.com (scheme, host, optional port; no path)`)
    }
  }
  return origins
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`. */
export function isLoopback (host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1')
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)
}

type Timeouts = 'requestTimeoutMs' | 'headersTimeoutMs' | 'bodyStallTimeoutMs' | 'connectionTimeoutMs' | 'keepAliveTimeoutMs'

function timeouts (env: Env): Pick<Config, Timeouts> {
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', 120_000, 1, 86_400_000)
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', Math.min(15_000, requestTimeoutMs), 1, 86_400_000)
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new InvalidConfig('HEADERS_TIMEOUT_MS', `must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`)
  }
  return {
    requestTimeoutMs,
    headersTimeoutMs,
    bodyStallTimeoutMs: integer(env, 'BODY_STALL_TIMEOUT_MS', 10_000, 1, 86_400_000),
    connectionTimeoutMs: integer(env, 'CONNECTION_TIMEOUT_MS', 60_000, 1, 86_400_000),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 5000, 1, 86_400_000),
  }
}

/** Open access is only for loopback: anything else needs tokens, or an explicit opt-out. */
function checkExposure (config: Config): Config {
  if (config.authTokensFile !== undefined || config.allowUnauthenticated || isLoopback(config.host)) return config
  throw new InvalidConfig('HOST', `${config.host} is not a loopback address and AUTH_TOKENS_FILE is not set, so ` +
    'anyone who reaches the port would get in. Set AUTH_TOKENS_FILE, or ALLOW_UNAUTHENTICATED=1 to serve without authentication')
}

/**
 * Reads the configuration. `cwd` is what a relative `DATA_DIR` resolves against.
 * The protections of a shared service (rate limit, stream cap, batch cap, load shedding) are on by default
 * only with AUTH_TOKENS_FILE; without tokens the server behaves exactly as API.md says unless
 * they are set explicitly.
 * @throws InvalidConfig (`SS_INVALID_CONFIG`) naming the first invalid variable, also for a
 * non-loopback HOST without AUTH_TOKENS_FILE or ALLOW_UNAUTHENTICATED=1.
 */
export function loadConfig (env: Env = process.env, cwd: string = process.cwd()): Config {
  const tokensFile = read(env, 'AUTH_TOKENS_FILE')
  const authOn = tokensFile !== undefined
  const storage = storageKind(env)
  return checkExposure({
    port: integer(env, 'PORT', 8787, 0, 65535),
    host: read(env, 'HOST') ?? '127.0.0.1',
    dataDir: resolve(cwd, read(env, 'DATA_DIR') ?? './data'),
    storage,
    ...databaseUrl(env, storage),
    logLevel: logLevel(env),
    bodyLimit: integer(env, 'BODY_LIMIT', 67_108_864, 1, Number.MAX_SAFE_INTEGER),
    maxOpenSessions: integer(env, 'MAX_OPEN_SESSIONS', 1000, 1, 1_000_000),
    maxOpenSessionBytes: integer(env, 'MAX_OPEN_SESSION_BYTES', 512 * MIB, 0, Number.MAX_SAFE_INTEGER),
    maxUnsavedSessions: integer(env, 'MAX_UNSAVED_SESSIONS', authOn ? 32 : 0, 0, 1_000_000),
    maxUnsavedSessionBytes: integer(env, 'MAX_UNSAVED_SESSION_BYTES', authOn ? 8 * MIB : 0, 0, Number.MAX_SAFE_INTEGER),
    maxUnsavedSessionEntries: integer(env, 'MAX_UNSAVED_SESSION_ENTRIES', authOn ? 2000 : 0, 0, 1_000_000),
    unsavedSessionMaxAgeMs: integer(env, 'UNSAVED_SESSION_MAX_AGE_MS', DEFAULT_UNSAVED_MAX_AGE_MS, 60_000, 366 * 86_400_000),
    ...(tokensFile === undefined ? {} : { authTokensFile: resolve(cwd, tokensFile) }),
    allowUnauthenticated: flag(env, 'ALLOW_UNAUTHENTICATED'),
    rateLimitMax: integer(env, 'RATE_LIMIT_MAX', authOn ? 6000 : 0, 0, 1_000_000_000),
    publicRateLimitMax: integer(env, 'PUBLIC_RATE_LIMIT_MAX', authOn ? 600 : 0, 0, 1_000_000_000),
    rateLimitWindowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1, 86_400_000),
    maxSsePerToken: integer(env, 'MAX_SSE_PER_TOKEN', authOn ? 32 : 0, 0, 1_000_000),
    rateLimitTenantMax: integer(env, 'RATE_LIMIT_TENANT_MAX', authOn ? 30_000 : 0, 0, 1_000_000_000),
    maxSsePerTenant: integer(env, 'MAX_SSE_PER_TENANT', authOn ? 256 : 0, 0, 1_000_000),
    maxTokensPerTenant: integer(env, 'MAX_TOKENS_PER_TENANT', 100, 0, 1_000_000),
    maxDownloadBytesPerToken: integer(env, 'MAX_DOWNLOAD_BYTES_PER_TOKEN', authOn ? 256 * MIB : 0, 0, Number.MAX_SAFE_INTEGER),
    maxBatchEntries: integer(env, 'MAX_BATCH_ENTRIES', authOn ? 1000 : 0, 0, 1_000_000),
    searchIndex: read(env, 'SEARCH_INDEX') === undefined || flag(env, 'SEARCH_INDEX'),
    maxRewriteBytes: integer(env, 'MAX_REWRITE_BYTES', authOn ? 1_073_741_824 : 0, 0, Number.MAX_SAFE_INTEGER),
    maxEventLoopDelayMs: integer(env, 'MAX_EVENT_LOOP_DELAY_MS', authOn ? 1000 : 0, 0, 60_000),
    ...timeouts(env),
    maxConnections: integer(env, 'MAX_CONNECTIONS', authOn ? 2048 : 0, 0, 1_000_000),
    maxConnectionsPerClient: integer(env, 'MAX_CONNECTIONS_PER_CLIENT', authOn ? 256 : 0, 0, 1_000_000),
    corsOrigins: corsOrigins(env),
    ...hygiene(env, authOn),
  })
}

/** Blob collection, retention and quotas: collection and quotas on by default only with tokens. */
function hygiene (env: Env, authOn: boolean): Pick<Config, 'blobGcIntervalMs' | 'blobGcGraceMs' | 'retentionDays' |
'retentionKeepLabelled' | 'retentionIntervalMs' | 'quotaBytes' | 'quotaSessions'> {
  return {
    blobGcIntervalMs: integer(env, 'BLOB_GC_INTERVAL_MS', authOn ? 3_600_000 : 0, 0, 366 * 86_400_000),
    blobGcGraceMs: integer(env, 'BLOB_GC_GRACE_MS', 3_600_000, 0, 366 * 86_400_000),
    retentionDays: integer(env, 'RETENTION_DAYS', 0, 0, 36_500),
    retentionKeepLabelled: flag(env, 'RETENTION_KEEP_LABELLED'),
    retentionIntervalMs: integer(env, 'RETENTION_INTERVAL_MS', 3_600_000, 1000, 366 * 86_400_000),
    quotaBytes: integer(env, 'QUOTA_BYTES', authOn ? 10 * 1024 * MIB : 0, 0, Number.MAX_SAFE_INTEGER),
    quotaSessions: integer(env, 'QUOTA_SESSIONS', authOn ? 100_000 : 0, 0, 1_000_000_000),
  }
}

/** The registry's memory bounds (per tenant) from the configuration. */
export function registryLimits (config: Config): RegistryLimits {
  return {
    maxOpenSessionBytes: config.maxOpenSessionBytes,
    maxUnsavedSessions: config.maxUnsavedSessions,
    maxUnsavedSessionBytes: config.maxUnsavedSessionBytes,
    maxUnsavedSessionEntries: config.maxUnsavedSessionEntries,
  }
}
