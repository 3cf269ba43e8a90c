/**
 * Per-tenant storage settings, kept in the token file beside the tokens (its `tenants` object,
 * by tenant name): how long sessions are kept and how much a tenant may store. A tenant absent
 * there, and every setting left out, takes the server's defaults (src/config.ts); a `0` turns a
 * setting off for that tenant.
 *
 * ```json
 * { "version": 1, "tokens": [...],
 *   "tenants": { "acme": { "retention": { "days": 30, "keepLabelled": true },
 *                          "quota": { "bytes": 1073741824, "sessions": 5000 } } } }
 * ```
 */
import { InvalidArgument } from '../errors.js'

export interface RetentionSettings {
  /** Sessions unchanged for this many days are deleted; 0 = kept forever. */
  days?: number
  /** Keep sessions that hold a label (a `label` entry naming an entry) however old. */
  keepLabelled?: boolean
}

export interface QuotaSettings {
  /** Bytes of sessions and blobs together; 0 = no quota. */
  bytes?: number
  /** Sessions; 0 = no quota. */
  sessions?: number
}

export interface TenantSettings {
  retention?: RetentionSettings
  quota?: QuotaSettings
}

/** Settings by tenant name. */
export type TenantSettingsFile = Record<string, TenantSettings>

/** Most days of retention (100 years): beyond, the cut-off date is no longer a date. */
const MAX_DAYS = 36_500

function count (value: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new InvalidArgument(`${what} must be an integer from 0 to ${max}`)
  }
  return value
}

function objectOf (value: unknown, what: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidArgument(`${what} must be an object`)
  return value as Record<string, unknown>
}

function settingsOf (value: unknown, tenant: string): TenantSettings {
  const doc = objectOf(value, `tenants.${tenant}`) ?? {}
  const out: TenantSettings = {}
  const retention = objectOf(doc.retention, `tenants.${tenant}.retention`)
  if (retention !== undefined) {
    const keep = retention.keepLabelled
    if (keep !== undefined && typeof keep !== 'boolean') throw new InvalidArgument(`tenants.${tenant}.retention.keepLabelled must be true or false`)
    out.retention = { days: count(retention.days, `tenants.${tenant}.retention.days`, MAX_DAYS), keepLabelled: keep }
  }
  const quota = objectOf(doc.quota, `tenants.${tenant}.quota`)
  if (quota !== undefined) {
    out.quota = { bytes: count(quota.bytes, `tenants.${tenant}.quota.bytes`), sessions: count(quota.sessions, `tenants.${tenant}.quota.sessions`) }
  }
  return out
}

/**
 * The `tenants` object of a token file, checked; `{}` when absent.
 * @throws InvalidArgument naming the first setting that is wrong.
 */
export function parseTenantSettings (value: unknown, tenantRe: RegExp): TenantSettingsFile {
  const doc = objectOf(value, 'tenants') ?? {}
  const out: TenantSettingsFile = {}
  for (const [tenant, settings] of Object.entries(doc)) {
    if (!tenantRe.test(tenant)) throw new InvalidArgument(`tenants: '${tenant}' is not a tenant name`)
    out[tenant] = settingsOf(settings, tenant)
  }
  return out
}
