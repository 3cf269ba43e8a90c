/**
 * The open connections by client address, and who gets a place when a new one arrives
 * (src/plugins/connections.ts). Beyond the per-address cap the newcomer is refused. At the total
 * cap, a newcomer from an address that holds fewer connections than the largest holder takes the
 * place of one of that holder's connections, the oldest that is `idle` (waiting for a request, or
 * for the rest of one) if there is one, else its oldest: an address, or a few, that fill the
 * whole table can delay a client elsewhere by one eviction, never shut it out.
 */
import type { ConnectionCaps } from './descriptor-limit.js'

/** What becomes of a new connection. */
export type Admission<S> =
  | { admitted: true, evicted?: S }
  | { admitted: false, reason: 'per-client' | 'total' }

export class ConnectionTable<S> {
  readonly #caps: ConnectionCaps
  readonly #idle: (socket: S) => boolean
  /** Sockets by address, oldest first (a `Set` keeps insertion order). */
  readonly #byAddress = new Map<string, Set<S>>()
  #size = 0

  /** `idle`: true for a socket that serves no request now, the first to give way. */
  constructor (caps: ConnectionCaps, idle: (socket: S) => boolean = () => true) {
    this.#caps = caps
    this.#idle = idle
  }

  /** Connections held now. */
  get size (): number { return this.#size }

  /** Connections `address` holds now. */
  heldBy (address: string): number { return this.#byAddress.get(address)?.size ?? 0 }

  /**
   * Admits `socket` from `address` or says why not. An evicted socket is already out of the
   * table; the caller closes it.
   */
  admit (address: string, socket: S): Admission<S> {
    const held = this.heldBy(address)
    if (this.#caps.perClient > 0 && held >= this.#caps.perClient) return { admitted: false, reason: 'per-client' }
    let evicted: S | undefined
    if (this.#caps.total > 0 && this.#size >= this.#caps.total) {
      evicted = this.#oldestOfLargestHolder(held)
      if (evicted === undefined) return { admitted: false, reason: 'total' }
    }
    this.#add(address, socket)
    return evicted === undefined ? { admitted: true } : { admitted: true, evicted }
  }

  /** Forgets `socket`; nothing happens when it is not in the table (any more). */
  remove (address: string, socket: S): void {
    const sockets = this.#byAddress.get(address)
    if (sockets === undefined || !sockets.delete(socket)) return
    this.#size--
    if (sockets.size === 0) this.#byAddress.delete(address)
  }

  #add (address: string, socket: S): void {
    const sockets = this.#byAddress.get(address)
    if (sockets === undefined) this.#byAddress.set(address, new Set([socket]))
    else sockets.add(socket)
    this.#size++
  }

  /**
   * Removes and returns a socket of the address holding the most (its oldest idle one, else its
   * oldest), when that address holds at least two more than the newcomer's (`held`); else
   * undefined: taking a place from an address that holds as few would only move the refusal to it.
   */
  #oldestOfLargestHolder (held: number): S | undefined {
    let largest: [string, Set<S>] | undefined
    for (const entry of this.#byAddress) {
      if (largest === undefined || entry[1].size > largest[1].size) largest = entry
    }
    if (largest === undefined || largest[1].size < held + 2) return undefined
    const [address, sockets] = largest
    let chosen = sockets.values().next().value as S
    for (const socket of sockets) {
      if (this.#idle(socket)) {
        chosen = socket
        break
      }
    }
    this.remove(address, chosen)
    return chosen
  }
}
