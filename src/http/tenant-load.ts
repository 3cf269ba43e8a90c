/**
 * How much of the server's time each tenant took lately: the wall time of its finished
 * requests (live streams excluded), decayed with a half-life of `HALF_LIFE_MS`. Load shedding
 * uses it to refuse the tenants that cause the lag rather than everyone (src/plugins/overload.ts).
 */

/** Recent work halves in weight every this many ms. */
export const HALF_LIFE_MS = 5000

interface Weight { value: number, at: number }

export class TenantLoad {
  readonly #weights = new Map<string, Weight>()

  /** Counts `ms` of work for `tenant`, at `now`. */
  record (tenant: string, ms: number, now = Date.now()): void {
    const weight = this.#weights.get(tenant)
    const value = weight === undefined ? 0 : decayed(weight, now)
    this.#weights.set(tenant, { value: value + ms, at: now })
  }

  /** The recent work of `tenant`, decayed to `now`. */
  weight (tenant: string, now = Date.now()): number {
    const weight = this.#weights.get(tenant)
    return weight === undefined ? 0 : decayed(weight, now)
  }

  /**
   * True when `tenant` took at least an equal share of the recent work of the tenants that did
   * any (so a lone busy tenant is always heavy, and a tenant with none never is while another has).
   */
  isHeavy (tenant: string, now = Date.now()): boolean {
    let total = 0
    let active = 0
    for (const [name, weight] of this.#weights) {
      const value = decayed(weight, now)
      if (value < 0.01) {
        this.#weights.delete(name) // forgotten: nothing recent
        continue
      }
      total += value
      active++
    }
    if (active === 0) return true
    return this.weight(tenant, now) >= total / active
  }
}

function decayed ({ value, at }: Weight, now: number): number {
  return value * 2 ** (-(Math.max(0, now - at)) / HALF_LIFE_MS)
}
