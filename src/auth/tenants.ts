/**
 * One registry and one blob store per tenant, created on first use, over the one session store
 * of the server (which keeps tenants apart: on disk the default tenant keeps `DATA_DIR` itself,
 * every other one `DATA_DIR/tenants/<tenant>/`). A session or blob of one tenant is simply not
 * found (404) by another: nothing is shared to leak.
 */
import type { BlobStoreFactory } from '../blobs/index.js'
import type { BlobStore } from '../blobs/types.js'
import { InvalidArgument, NotReady } from '../errors.js'
import { createRegistry, type SessionRegistry } from '../registry/session-registry.js'
import type { Logger } from '../session/logger.js'
import type { SessionStore } from '../storage/store.js'
import { tenantRoot } from '../storage/paths.js'
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
  /** The session store every tenant's registry uses (keyed by tenant). */
  store: SessionStore
  /** Makes each tenant's blob store. */
  blobStores: BlobStoreFactory
  /** The default tenant's registry and blobs, owned (and closed) by the caller. */
  defaultTenant: { registry: SessionRegistry, blobs: BlobStore }
  logger?: Logger
  /** Per tenant. */
  maxOpenSessions?: number
}

export { tenantRoot }

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

  /** No tenant's registry is shutting down. */
  isReady (): boolean {
    return [...this.#tenants.values()].every((t) => t.registry.isReady())
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
    const { dataDir, store, blobStores, logger, maxOpenSessions, defaultTenant } = this.#options
    const root = tenantRoot(dataDir, name)
    const blobs = blobStores(root, name)
    const registry = createRegistry({
      tenant: name,
      dataDir: root,
      store,
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
