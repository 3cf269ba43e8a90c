/** A Map bounded to `capacity` entries that forgets the least recently used one first. */
export class Lru<K, V> {
  readonly #map = new Map<K, V>()
  readonly #capacity: number

  constructor (capacity: number) {
    if (!(capacity >= 1)) throw new RangeError('Lru capacity must be at least 1')
    this.#capacity = capacity
  }

  get size (): number { return this.#map.size }

  /** The value, marked as most recently used. */
  get (key: K): V | undefined {
    const value = this.#map.get(key)
    if (value === undefined) return undefined
    this.#map.delete(key)
    this.#map.set(key, value)
    return value
  }

  set (key: K, value: V): void {
    this.#map.delete(key)
    this.#map.set(key, value)
    if (this.#map.size > this.#capacity) {
      const oldest = this.#map.keys().next()
      if (oldest.done !== true) this.#map.delete(oldest.value)
    }
  }

  delete (key: K): boolean { return this.#map.delete(key) }
}
