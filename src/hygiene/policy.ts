/**
 * What retention and quotas apply to a tenant: its settings in the token file
 * (src/auth/tenant-settings.ts), each one left out taken from the server's defaults (src/config.ts).
 */
import type { TenantSettings } from '../auth/tenant-settings.js'
import type { Config } from '../config.js'

export interface TenantPolicy {
  retention: {
    /** Sessions unchanged for this many days are deleted; 0 = kept forever. */
    days: number
    keepLabelled: boolean
  }
  quota: {
    /** Bytes of sessions and blobs; 0 = none. */
    bytes: number
    /** Sessions; 0 = none. */
    sessions: number
  }
}

export type PolicyConfig = Pick<Config, 'retentionDays' | 'retentionKeepLabelled' | 'quotaBytes' | 'quotaSessions'>

export function policyOf (config: PolicyConfig, settings: TenantSettings | undefined): TenantPolicy {
  return {
    retention: {
      days: settings?.retention?.days ?? config.retentionDays,
      keepLabelled: settings?.retention?.keepLabelled ?? config.retentionKeepLabelled,
    },
    quota: {
      bytes: settings?.quota?.bytes ?? config.quotaBytes,
      sessions: settings?.quota?.sessions ?? config.quotaSessions,
    },
  }
}
