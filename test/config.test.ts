import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'

describe('loadConfig', () => {
  it('applies the defaults of API.md, resolving DATA_DIR against cwd', () => {
    expect(loadConfig({}, '/srv/app')).toEqual({
      port: 8787,
      host: '127.0.0.1',
      dataDir: '/srv/app/data',
      storage: 'disk',
      logLevel: 'info',
      bodyLimit: 67_108_864,
      maxOpenSessions: 1000,
      maxOpenSessionBytes: 512 * 1024 * 1024,
      maxUnsavedSessions: 0,
      maxUnsavedSessionBytes: 0,
      maxUnsavedSessionEntries: 0,
      unsavedSessionMaxAgeMs: 7 * 24 * 60 * 60 * 1000,
      allowUnauthenticated: false,
      rateLimitMax: 0,
      rateLimitWindowMs: 60_000,
      maxSsePerToken: 0,
      rateLimitTenantMax: 0,
      maxSsePerTenant: 0,
      maxTokensPerTenant: 100,
      maxDownloadBytesPerToken: 0,
      maxBatchEntries: 0,
      searchIndex: true,
      maxEventLoopDelayMs: 0,
      publicRateLimitMax: 0,
      maxRewriteBytes: 0,
      requestTimeoutMs: 120_000,
      headersTimeoutMs: 15_000,
      bodyStallTimeoutMs: 10_000,
      connectionTimeoutMs: 60_000,
      keepAliveTimeoutMs: 5000,
      maxConnections: 0,
      maxConnectionsPerClient: 0,
      corsOrigins: [],
      blobGcIntervalMs: 0,
      blobGcGraceMs: 3_600_000,
      retentionDays: 0,
      retentionKeepLabelled: false,
      retentionIntervalMs: 3_600_000,
      quotaBytes: 0,
      quotaSessions: 0,
    })
  })

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/ss',
      STORAGE: 'memory',
      LOG_LEVEL: 'debug',
      BODY_LIMIT: '1024',
      MAX_OPEN_SESSIONS: '5',
      MAX_OPEN_SESSION_BYTES: '4096',
      MAX_UNSAVED_SESSIONS: '7',
      MAX_UNSAVED_SESSION_BYTES: '2048',
      MAX_UNSAVED_SESSION_ENTRIES: '9',
      UNSAVED_SESSION_MAX_AGE_MS: '3600000',
      AUTH_TOKENS_FILE: 'etc/tokens.json',
      ALLOW_UNAUTHENTICATED: '0',
      RATE_LIMIT_MAX: '10',
      RATE_LIMIT_WINDOW_MS: '1000',
      MAX_SSE_PER_TOKEN: '3',
      MAX_BATCH_ENTRIES: '50',
      SEARCH_INDEX: '0',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      PUBLIC_RATE_LIMIT_MAX: '20',
      MAX_REWRITE_BYTES: '4096',
      RATE_LIMIT_TENANT_MAX: '20',
      MAX_SSE_PER_TENANT: '4',
      MAX_TOKENS_PER_TENANT: '6',
      MAX_DOWNLOAD_BYTES_PER_TOKEN: '1000',
      REQUEST_TIMEOUT_MS: '3000',
      HEADERS_TIMEOUT_MS: '2000',
      BODY_STALL_TIMEOUT_MS: '500',
      CONNECTION_TIMEOUT_MS: '4000',
      KEEP_ALIVE_TIMEOUT_MS: '1000',
      MAX_CONNECTIONS: '10',
      MAX_CONNECTIONS_PER_CLIENT: '2',
      CORS_ORIGINS: 'https://a.example, http://localhost:3000',
      BLOB_GC_INTERVAL_MS: '60000',
      BLOB_GC_GRACE_MS: '0',
      RETENTION_DAYS: '30',
      RETENTION_KEEP_LABELLED: '1',
      RETENTION_INTERVAL_MS: '5000',
      QUOTA_BYTES: '1000000',
      QUOTA_SESSIONS: '12',
    }, '/srv/app')
    expect(config).toEqual({
      port: 0,
      host: '0.0.0.0',
      dataDir: '/var/lib/ss',
      storage: 'memory',
      logLevel: 'debug',
      bodyLimit: 1024,
      maxOpenSessions: 5,
      maxOpenSessionBytes: 4096,
      maxUnsavedSessions: 7,
      maxUnsavedSessionBytes: 2048,
      maxUnsavedSessionEntries: 9,
      unsavedSessionMaxAgeMs: 3_600_000,
      authTokensFile: '/srv/app/etc/tokens.json',
      allowUnauthenticated: false,
      rateLimitMax: 10,
      rateLimitWindowMs: 1000,
      maxSsePerToken: 3,
      maxBatchEntries: 50,
      searchIndex: false,
      maxEventLoopDelayMs: 0,
      publicRateLimitMax: 20,
      maxRewriteBytes: 4096,
      rateLimitTenantMax: 20,
      maxSsePerTenant: 4,
      maxTokensPerTenant: 6,
      maxDownloadBytesPerToken: 1000,
      requestTimeoutMs: 3000,
      headersTimeoutMs: 2000,
      bodyStallTimeoutMs: 500,
      connectionTimeoutMs: 4000,
      keepAliveTimeoutMs: 1000,
      maxConnections: 10,
      maxConnectionsPerClient: 2,
      corsOrigins: ['https://a.example', 'http://localhost:3000'],
      blobGcIntervalMs: 60_000,
      blobGcGraceMs: 0,
      retentionDays: 30,
      retentionKeepLabelled: true,
      retentionIntervalMs: 5000,
      quotaBytes: 1_000_000,
      quotaSessions: 12,
    })
  })

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', STORAGE: '' }, '/x')).toMatchObject({ port: 8787, storage: 'disk' })
  })

  it('turns rate limit, stream cap, batch cap and load shedding on by default only with AUTH_TOKENS_FILE', () => {
    expect(loadConfig({ AUTH_TOKENS_FILE: '/t.json' })).toMatchObject({
      rateLimitMax: 6000,
      maxSsePerToken: 32,
      maxBatchEntries: 1000,
      maxEventLoopDelayMs: 1000,
      authTokensFile: '/t.json',
      publicRateLimitMax: 600,
      maxRewriteBytes: 1_073_741_824,
      maxUnsavedSessions: 32,
      maxUnsavedSessionBytes: 8 * 1024 * 1024,
      maxUnsavedSessionEntries: 2000,
      maxConnections: 2048,
      maxConnectionsPerClient: 256,
      rateLimitTenantMax: 30_000,
      maxSsePerTenant: 256,
      maxDownloadBytesPerToken: 256 * 1024 * 1024,
      blobGcIntervalMs: 3_600_000,
      quotaBytes: 10 * 1024 * 1024 * 1024,
      quotaSessions: 100_000,
    })
    expect(loadConfig({})).toMatchObject({ publicRateLimitMax: 0, maxRewriteBytes: 0, blobGcIntervalMs: 0, quotaBytes: 0, quotaSessions: 0 })
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '2000' })).toThrow('HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS')
    expect(loadConfig({})).toMatchObject({ rateLimitMax: 0, maxSsePerToken: 0, maxBatchEntries: 0, maxEventLoopDelayMs: 0 })
    expect(loadConfig({}).authTokensFile).toBeUndefined()
    expect(loadConfig({ RATE_LIMIT_MAX: '5', MAX_SSE_PER_TOKEN: '2', MAX_BATCH_ENTRIES: '7', MAX_EVENT_LOOP_DELAY_MS: '50' }))
      .toMatchObject({ rateLimitMax: 5, maxSsePerToken: 2, maxBatchEntries: 7, maxEventLoopDelayMs: 50 })
  })

  it('refuses a non-loopback HOST without tokens unless ALLOW_UNAUTHENTICATED=1', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'example.com']) {
      expect(() => loadConfig({ HOST: host })).toThrow(expect.objectContaining({
        code: 'SS_INVALID_CONFIG', message: expect.stringMatching(/^HOST: .* is not a loopback address and AUTH_TOKENS_FILE is not set.*ALLOW_UNAUTHENTICATED=1/),
      }))
      expect(loadConfig({ HOST: host, ALLOW_UNAUTHENTICATED: '1' }).host).toBe(host)
      expect(loadConfig({ HOST: host, AUTH_TOKENS_FILE: '/t.json' }).host).toBe(host)
    }
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) {
      expect(loadConfig({ HOST: host }).host).toBe(host)
    }
  })

  it('reads CORS_ORIGINS: origins, or * alone', () => {
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*'])
    expect(() => loadConfig({ CORS_ORIGINS: '*, https://a.example' })).toThrow("CORS_ORIGINS: '*' allows every origin")
    expect(() => loadConfig({ CORS_ORIGINS: 'https://a.example/path' })).toThrow("CORS_ORIGINS: 'https://a.example/path' is not an origin")
    expect(() => loadConfig({ CORS_ORIGINS: 'a.example' })).toThrow("'a.example' is not an origin")
  })

  it('takes STORAGE=postgres only with a postgres DATABASE_URL, naming it otherwise', () => {
    const url = 'postgres://app@db.example:5432/sessions'
    expect(loadConfig({ STORAGE: 'postgres', DATABASE_URL: url })).toMatchObject({ storage: 'postgres', databaseUrl: url })
    expect(() => loadConfig({ STORAGE: 'postgres' })).toThrow('DATABASE_URL: required with STORAGE=postgres')
    expect(() => loadConfig({ STORAGE: 'postgres', DATABASE_URL: 'mysql://db/x' })).toThrow('DATABASE_URL: expected a postgres://')
    expect(loadConfig({ STORAGE: 'disk', DATABASE_URL: url }).databaseUrl).toBeUndefined()
  })

  it('bounds every wait for the database by DATABASE_TIMEOUT_MS, 10 s unless set, at least 100 ms', () => {
    const postgres = { STORAGE: 'postgres', DATABASE_URL: 'postgres://app@db.example/sessions' }
    expect(loadConfig(postgres).databaseTimeoutMs).toBe(10_000)
    expect(loadConfig({ ...postgres, DATABASE_TIMEOUT_MS: '2500' }).databaseTimeoutMs).toBe(2500)
    expect(() => loadConfig({ ...postgres, DATABASE_TIMEOUT_MS: '99' })).toThrow('DATABASE_TIMEOUT_MS')
    expect(loadConfig({ DATABASE_TIMEOUT_MS: '2500' }).databaseTimeoutMs).toBeUndefined()
  })

  it.each([
    ['PORT', '65536'], ['PORT', '-1'], ['PORT', '80x'], ['PORT', '1.5'],
    ['BODY_LIMIT', '0'], ['BODY_LIMIT', 'lots'], ['MAX_OPEN_SESSIONS', '0'],
    ['STORAGE', 'sqlite'], ['LOG_LEVEL', 'verbose'],
    ['ALLOW_UNAUTHENTICATED', 'yes'], ['RATE_LIMIT_MAX', '-1'], ['RATE_LIMIT_WINDOW_MS', '0'],
    ['MAX_SSE_PER_TOKEN', 'many'], ['MAX_BATCH_ENTRIES', '-1'], ['MAX_EVENT_LOOP_DELAY_MS', '60001'],
    ['CORS_ORIGINS', 'ftp://x.example'], ['UNSAVED_SESSION_MAX_AGE_MS', '59999'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(expect.objectContaining({
      code: 'SS_INVALID_CONFIG', message: expect.stringMatching(new RegExp(`^${name}: `)),
    }))
  })
})
