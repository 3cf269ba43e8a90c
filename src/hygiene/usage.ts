/**
 * What each tenant stores (`GET /v1/usage`, quotas): its sessions from the session store, its
 * blobs from its blob store. Quota checks run on every write, so the figures are kept for a
 * moment (`ttlMs`) and grown by what this server accepts meanwhile; a delete here, a collection
 * or retention drops them, so the next check counts again. Writes on other servers show once the
 * figures are counted again (within `ttlMs`).
 */
import type { BlobStore } from '../blobs/types.js'
import type { SessionStore } from '../storage/store.js'

export interface TenantUsage {
  /** Sessions, saved and unsaved. */
  sessions: number
  /** Bytes of the sessions' stored text. */
  sessionBytes: number
  blobs: number
  blobBytes: number
  /** `sessionBytes + blobBytes`: what the byte quota bounds. */
  bytes: number
}

interface Held {
  at: number
  usage: Promise<TenantUsage>
}

/** Default ms a count is used before the next check counts again. */
export const USAGE_TTL_MS = 2000

export class UsageMeter {
  readonly #store: SessionStore
  readonly #ttlMs: number
  readonly #held = new Map<string, Held>()

  constructor (store: SessionStore, ttlMs = USAGE_TTL_MS) {
    this.#store = store
    this.#ttlMs = ttlMs
  }

  /** The tenant's usage: counted now when `fresh` or when the last count is older than the TTL. */
  async of (tenant: string, blobs: BlobStore, fresh = false): Promise<TenantUsage> {
    const held = this.#held.get(tenant)
    if (!fresh && held !== undefined && Date.now() - held.at < this.#ttlMs) return await held.usage
    const usage = this.#count(tenant, blobs)
    const entry = { at: Date.now(), usage }
    this.#held.set(tenant, entry)
    usage.catch(() => { if (this.#held.get(tenant) === entry) this.#held.delete(tenant) })
    return await usage
  }

  /** Adds what this server just stored for `tenant` to the figures held. */
  charge (tenant: string, bytes: number, sessions: number): void {
    const held = this.#held.get(tenant)
    if (held === undefined) return
    held.usage = held.usage.then((u) => ({ ...u, sessions: u.sessions + sessions, sessionBytes: u.sessionBytes + bytes, bytes: u.bytes + bytes }))
    held.usage.catch(() => {})
  }

  /** Drops the figures held for `tenant` (something was deleted): the next check counts again. */
  forget (tenant: string): void {
    this.#held.delete(tenant)
  }

  async #count (tenant: string, blobs: BlobStore): Promise<TenantUsage> {
    const [sessions, stored] = await Promise.all([this.#store.usage(tenant), blobs.usage()])
    return {
      sessions: sessions.sessions,
      sessionBytes: sessions.bytes,
      blobs: stored.blobs,
      blobBytes: stored.bytes,
      bytes: sessions.bytes + stored.bytes,
    }
  }
}
