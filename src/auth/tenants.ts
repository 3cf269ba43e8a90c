/**
 * One storage root per tenant: the default tenant keeps `DATA_DIR` itself, every other tenant
 * gets `DATA_DIR/tenants/<tenant>/` with its own `sessions/`, `blobs/` and `terminal-sessions/`.
 * Each tenant has its own SessionRegistry and BlobStore, created on first use, so that a session
 * or blob of one tenant is simply not found (404) by another: nothing is shared to leak.
 */
import { join } from 'node:path'
import type { BlobStoreFactory } from '../blobs/index.js'
import type { BlobStore } from '../blobs/types.js'
import { InvalidArgument, NotReady } from '../errors.js'
import { createRegistry, type SessionRegistry } from '../registry/session-registry.js'
import type { Logger } from '../session/logger.js'
import type { SessionStorage } from '../storage/types.js'
import { DEFAULT_TENANT, TENANT_RE } from './tokens.js'

/** What a request works on: its tenant's sessions and blobs. */
export interface Tenant {
  name: string
  registry: SessionRegistry
  blobs: BlobStore
}

/** What every tenant's registry and blobs are made from. */
export interface TenantsOptions {
  /** `DATA_DIR`: the default tenant's root and the parent of `tenants/`. */
  dataDir: string
  /** The session storage every tenant's registry uses (paths keep tenants apart). */
  storage: SessionStorage
  /** Makes each tenant's blob store. */
  blobStores: BlobStoreFactory
  /** The default tenant's registry and blobs, owned (and closed) by the caller. */
  defaultTenant: { registry: SessionRegistry, blobs: BlobStore }
  logger?: Logger
  /** Per tenant. */
  maxOpenSessions?: number
}

/** The storage root of `tenant` under `dataDir`. */
export function tenantRoot (dataDir: string, tenant: string): string {
  return tenant === DEFAULT_TENANT ? dataDir : join(dataDir, 'tenants', tenant)
}

/** The tenants of one server, created lazily by name. */
export class Tenants {
  readonly #options: TenantsOptions
  readonly #tenants = new Map<string, Tenant>()
  #closed = false

  constructor (options: TenantsOptions) {
    this.#options = options
    this.#tenants.set(DEFAULT_TENANT, { name: DEFAULT_TENANT, ...options.defaultTenant })
  }

  /** Names of the tenants in use so far (the default one always). */
  get names (): string[] { return [...this.#tenants.keys()] }

  /**
   * The tenant `name`, created on first use (nothing is written until it stores something).
   * @throws InvalidArgument for a name that is not a tenant name; NotReady once closed.
   */
  get (name: string): Tenant {
    const known = this.#tenants.get(name)
    if (known !== undefined) return known
    if (!TENANT_RE.test(name)) throw new InvalidArgument(`'${name}' is not a tenant name`)
    if (this.#closed) throw new NotReady('shutting down')
    const tenant = this.#create(name)
    this.#tenants.set(name, tenant)
    return tenant
  }

  /** Every tenant's registry has its index and can write to its root. */
  async isReady (): Promise<boolean> {
    const ready = await Promise.all([...this.#tenants.values()].map(async (t) => await t.registry.isReady()))
    return ready.every(Boolean)
  }

  /** Ends every live stream of every tenant (before the server waits for its connections). */
  shutdown (): void {
    for (const tenant of this.#tenants.values()) tenant.registry.shutdown()
  }

  /**
   * Shuts every tenant down and closes (flush + fsync) the registries this holder created. The
   * default tenant's registry is its owner's to close.
   */
  async close (): Promise<void> {
    this.#closed = true
    this.shutdown()
    const created = [...this.#tenants.values()].filter((t) => t.name !== DEFAULT_TENANT)
    await Promise.all(created.map(async (t) => await t.registry.close()))
  }

  #create (name: string): Tenant {
    const { dataDir, storage, blobStores, logger, maxOpenSessions, defaultTenant } = this.#options
    const root = tenantRoot(dataDir, name)
    const blobs = blobStores(root, name)
    const registry = createRegistry({
      dataDir: root,
      storage,
      blobs,
      logger,
      maxOpenSessions,
      streams: defaultTenant.registry.streamOptions,
      limits: defaultTenant.registry.limits,
    })
    logger?.info({ tenant: name }, 'tenant opened')
    return { name, registry, blobs }
  }
}
