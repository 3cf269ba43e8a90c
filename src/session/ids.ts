/**
 * Identifier and timestamp generation (SPEC.md §3.2).
 */
import crypto from 'node:crypto'
import { ENTRY_ID_ATTEMPTS } from './types.js'

/** A source of cryptographically random bytes, injectable for tests. */
export type RandomBytes = (size: number) => Buffer

const defaultRandomBytes: RandomBytes = (size) => crypto.randomBytes(size)

/** Random bytes drawn 4 KiB at a time: one call into the CSPRNG per ~1,000 entry ids, not one per id. */
const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let poolOffset = POOL_BYTES

/** The offset of `size` fresh pool bytes (at most 4096), refilling the pool when it runs short. */
function takeFromPool (size: number): number {
  if (poolOffset + size > POOL_BYTES) {
    crypto.randomFillSync(pool)
    poolOffset = 0
  }
  const at = poolOffset
  poolOffset += size
  return at
}

/**
 * `size` bytes from a pool refilled with `crypto.randomFillSync`, as a new Buffer.
 * As random as `crypto.randomBytes` (same source, bytes never handed out twice), cheaper per call.
 */
export function pooledRandomBytes (size: number): Buffer {
  if (size > POOL_BYTES) return crypto.randomBytes(size)
  const at = takeFromPool(size)
  return Buffer.from(pool.subarray(at, at + size))
}

/** `pooledRandomBytes(size).toString('hex')` (size at most 4096), without a Buffer per call. */
function pooledRandomHex (size: number): string {
  const at = takeFromPool(size)
  return pool.toString('hex', at, at + size)
}

/**
 * A new entry id: 8 lowercase hex characters, redrawn while `isTaken` says it collides. After
 * `ENTRY_ID_ATTEMPTS` (100) collisions it switches to 16 lowercase hex characters, still checked.
 * Throws only when the random source keeps colliding for another 100 long draws (a broken
 * source, never a real one), so it cannot loop forever. The default source is the pool above.
 * @see SPEC.md §3.2
 */
export function createEntryId (
  isTaken: (id: string) => boolean,
  randomBytes?: RandomBytes
): string {
  // One id per append: the default source skips the Buffer a `RandomBytes` call would make.
  const randomHex = randomBytes === undefined ? pooledRandomHex : (size: number) => randomBytes(size).toString('hex')
  for (let i = 0; i < ENTRY_ID_ATTEMPTS; i++) {
    const id = randomHex(4)
    if (!isTaken(id)) return id
  }
  for (let i = 0; i < ENTRY_ID_ATTEMPTS; i++) {
    const id = randomHex(8)
    if (!isTaken(id)) return id
  }
  throw new Error('createEntryId: random source keeps producing taken ids')
}

// Monotonic state for UUIDv7 (RFC 9562 §6.2 method 1): a 12-bit counter in `rand_a`,
// seeded randomly each new millisecond and incremented within one.
let lastMs = -1
let counter = 0

/**
 * A new session id: UUIDv7 in lowercase canonical form (48-bit Unix ms timestamp, version 7,
 * 12-bit counter, variant 10, 62 random bits). Ids minted by one process are strictly
 * increasing in string order, also within one millisecond.
 * @see SPEC.md §3.2
 */
export function createSessionId (
  now: () => number = Date.now,
  randomBytes: RandomBytes = defaultRandomBytes
): string {
  const rand = randomBytes(10)
  let ms = Math.max(Math.floor(now()), 0)
  if (ms > lastMs) {
    counter = ((rand[0]! & 0x07) << 8) | rand[1]! // top bit clear: room to count up
  } else {
    ms = lastMs
    counter++
    if (counter > 0xfff) { ms++; counter = 0 }
  }
  lastMs = ms
  const b = Buffer.alloc(16)
  b.writeUIntBE(ms % 2 ** 48, 0, 6)
  b[6] = 0x70 | (counter >> 8)
  b[7] = counter & 0xff
  rand.copy(b, 8, 2, 10)
  b[8] = 0x80 | (b[8]! & 0x3f)
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

let lastIsoMs = Number.NaN
let lastIso = ''

/**
 * Current instant as ISO 8601 UTC with milliseconds and `Z` (`new Date().toISOString()`).
 * Formatted once per millisecond: a burst of appends shares the string.
 */
export function nowIso (): string {
  const ms = Date.now()
  if (ms !== lastIsoMs) {
    lastIso = new Date(ms).toISOString()
    lastIsoMs = ms
  }
  return lastIso
}
