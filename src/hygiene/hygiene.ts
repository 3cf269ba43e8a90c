/**
 * Storage hygiene of one server: blob collection and retention of every tenant, on demand and
 * every `BLOB_GC_INTERVAL_MS` / `RETENTION_INTERVAL_MS`, each under the store's `runAlone` so that
 * one server at a time works on a tenant; and the usage figures that quotas check. Every run is
 * logged and counted in `/metrics`.
 */
import type { Tenants } from '../auth/tenants.js'
import { TENANT_RE, type TokenStore } from '../auth/tokens.js'
import type { Config } from '../config.js'
import { CollectionRunning } from '../errors.js'
import { blobBytesCollected, blobCollections, blobsCollected, retentionDeleted } from '../metrics/instruments.js'
import { silentLogger, type Logger } from '../session/logger.js'
import type { SessionStore } from '../storage/store.js'
import { collectBlobs, type GcReport } from './blob-gc.js'
import { policyOf, type TenantPolicy } from './policy.js'
import { applyRetention, type RetentionReport } from './retention.js'
import { UsageMeter } from './usage.js'

export type HygieneConfig = Pick<Config, 'blobGcIntervalMs' | 'blobGcGraceMs' | 'retentionDays' | 'retentionKeepLabelled' |
'retentionIntervalMs' | 'quotaBytes' | 'quotaSessions'>

export interface HygieneOptions {
  config: HygieneConfig
  store: SessionStore
  tenants: Tenants
  /** The token file, whose `tenants` object holds per-tenant settings; absent in open mode. */
  tokens?: TokenStore
  logger?: Logger
}

export class Hygiene {
  readonly usage: UsageMeter
  readonly #options: HygieneOptions
  readonly #log: Logger
  readonly #timers: NodeJS.Timeout[] = []
  /** The periodic passes running now, by kind (a pass never starts over one of its kind still running). */
  readonly #passes = new Map<string, Promise<void>>()

  constructor (options: HygieneOptions) {
    this.#options = options
    this.#log = options.logger ?? silentLogger
    this.usage = new UsageMeter(options.store)
  }

  /** Whether `tenant` has the session `id` (saved or not). */
  async exists (tenant: string, id: string): Promise<boolean> {
    return await this.#options.store.info(tenant, id) !== undefined
  }

  /** The retention and quotas of `tenant`. */
  policy (tenant: string): TenantPolicy {
    return policyOf(this.#options.config, this.#options.tokens?.settingsOf(tenant))
  }

  /**
   * One collection of `tenant`'s unreferenced blobs.
   * @throws CollectionRunning when one runs already (on any server sharing the store).
   */
  async collect (tenant: string, dryRun = false): Promise<GcReport> {
    const { store, tenants, config } = this.#options
    const blobs = tenants.get(tenant).blobs
    const start = performance.now()
    let outcome
    try {
      outcome = await store.runAlone(`blob-gc:${tenant}`, async () => await collectBlobs({ store, blobs, tenant, graceMs: config.blobGcGraceMs, dryRun }))
    } catch (err) {
      blobCollections.inc({ outcome: 'failed' })
      throw err
    }
    if (!outcome.ran) throw new CollectionRunning()
    const report = outcome.value
    blobCollections.inc({ outcome: dryRun ? 'dry_run' : 'done' })
    if (!dryRun) {
      blobsCollected.inc(report.deleted)
      blobBytesCollected.inc(report.bytesFreed)
      this.usage.forget(tenant)
    }
    this.#log.info({ tenant, dryRun, ...report, ms: Math.round(performance.now() - start) }, 'blobs collected')
    return report
  }

  /** Applies `tenant`'s retention; `undefined` when it keeps sessions forever or another server applies it now. */
  async retain (tenant: string): Promise<RetentionReport | undefined> {
    const { days, keepLabelled } = this.policy(tenant).retention
    if (days <= 0) return undefined
    const { store, tenants } = this.#options
    const registry = tenants.get(tenant).registry
    const outcome = await store.runAlone(`retention:${tenant}`, async () => await applyRetention({ store, registry, tenant, days, keepLabelled }))
    if (!outcome.ran) return undefined
    const report = outcome.value
    retentionDeleted.inc(report.deleted)
    if (report.deleted > 0) this.usage.forget(tenant)
    if (report.examined > 0) this.#log.info({ tenant, days, keepLabelled, ...report }, 'retention applied')
    return report
  }

  /** Every tenant the store, the token file or this server knows. */
  async knownTenants (): Promise<string[]> {
    const { store, tokens, tenants } = this.#options
    const names = new Set([...await store.tenants(), ...tokens?.tenantNames ?? [], ...tenants.names])
    return [...names].filter((name) => TENANT_RE.test(name)).sort()
  }

  /** Starts the periodic collections and retention (each interval 0 = never). */
  start (): void {
    const { blobGcIntervalMs, retentionIntervalMs } = this.#options.config
    if (blobGcIntervalMs > 0) this.#every('collection', blobGcIntervalMs, async (tenant) => { await this.collect(tenant) })
    this.#every('retention', retentionIntervalMs, async (tenant) => { await this.retain(tenant) })
  }

  /** Stops the periodic runs and waits for one under way. */
  async stop (): Promise<void> {
    for (const timer of this.#timers.splice(0)) clearInterval(timer)
    await Promise.all(this.#passes.values())
  }

  #every (kind: string, ms: number, run: (tenant: string) => Promise<void>): void {
    const timer = setInterval(() => {
      if (this.#passes.has(kind)) return
      const pass = this.knownTenants()
        .then(async (names) => { for (const name of names) await run(name).catch(this.#skip(name, kind)) })
        .catch((err: unknown) => { this.#log.error({ err }, `${kind} pass failed`) })
        .finally(() => { this.#passes.delete(kind) })
      this.#passes.set(kind, pass)
    }, ms)
    timer.unref()
    this.#timers.push(timer)
  }

  #skip (tenant: string, what: string): (err: unknown) => void {
    return (err) => {
      if (err instanceof CollectionRunning) this.#log.info({ tenant }, 'collection skipped: another one runs')
      else this.#log.error({ err, tenant }, `${what} failed`)
    }
  }
}
