/**
 * A small seeded PRNG (mulberry32) so that every randomized fault run can be repeated from the
 * seed it prints.
 */

export interface Rng {
  readonly seed: number
  /** Uniform in [0, 1). */
  next(): number
  /** Integer in [min, max], both included. */
  int(min: number, max: number): number
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T
  /** True with probability `p`. */
  chance(p: number): boolean
}

export function createRng (seed: number): Rng {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)] as (typeof items)[number],
    chance: (p) => next() < p,
  }
}

/** The seed from `FAULT_SEED` when set (to replay a run), else a fresh one. */
export function seedFromEnv (): number {
  const raw = process.env.FAULT_SEED
  if (raw !== undefined && /^\d+$/.test(raw)) return Number(raw) >>> 0
  return Math.floor(Math.random() * 2 ** 32) >>> 0
}
