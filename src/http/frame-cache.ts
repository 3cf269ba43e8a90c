/**
 * Recently encoded SSE `entry` frames, shared by every subscriber of every session. Live
 * subscribers of one session all read the newest entries within moments of each other, so one
 * encoding (JSON.stringify, framing and UTF-8) serves all of them: each frame is one Buffer that
 * every socket writes as is. Bounded in bytes and in count, the oldest frame going first, so a
 * catch-up reader streaming a long history cannot grow it.
 */

interface Frame { seq: number, bytes: Buffer }

export class FrameCache {
  readonly #frames = new Map<object, Frame>()
  readonly #maxBytes: number
  readonly #maxFrames: number
  #bytes = 0

  /** At most `maxBytes` bytes and `maxFrames` frames. */
  constructor (maxBytes: number, maxFrames: number) {
    this.#maxBytes = maxBytes
    this.#maxFrames = maxFrames
  }

  get size (): number { return this.#frames.size }
  /** Bytes held. */
  get bytes (): number { return this.#bytes }

  /** The frame of `entry` at `seq`, made with `encode` and kept when not cached yet. */
  get (entry: object, seq: number, encode: () => string): Buffer {
    const cached = this.#frames.get(entry)
    if (cached !== undefined && cached.seq === seq) return cached.bytes
    const bytes = Buffer.from(encode(), 'utf8')
    if (bytes.length > this.#maxBytes / 4) return bytes // too big to be worth evicting others for
    if (cached !== undefined) this.#drop(entry, cached)
    this.#frames.set(entry, { seq, bytes })
    this.#bytes += bytes.length
    this.#trim()
    return bytes
  }

  #trim (): void {
    for (const [entry, frame] of this.#frames) {
      if (this.#bytes <= this.#maxBytes && this.#frames.size <= this.#maxFrames) return
      this.#drop(entry, frame)
    }
  }

  #drop (entry: object, frame: Frame): void {
    this.#frames.delete(entry)
    this.#bytes -= frame.bytes.length
  }
}

interface Joined { last: Buffer, count: number, bytes: Buffer }

/**
 * Runs of frames joined into one write, keyed by their first frame. Subscribers woken by the
 * same append read the same run of shared frames, so the first one to write it joins it and the
 * others write that same Buffer. A run is identified by its first and last frame and its length:
 * cached frames are unique per entry and seq, and consecutive seqs of one session are one run.
 */
const joined = new WeakMap<Buffer, Joined>()

/** `frames` as one Buffer: the frame itself when alone, else one shared join per run. */
export function joinFrames (frames: readonly Buffer[]): Buffer {
  const first = frames[0]
  if (first === undefined) return Buffer.alloc(0)
  if (frames.length === 1) return first
  const last = frames[frames.length - 1] as Buffer
  const hit = joined.get(first)
  if (hit !== undefined && hit.last === last && hit.count === frames.length) return hit.bytes
  const bytes = Buffer.concat(frames)
  joined.set(first, { last, count: frames.length, bytes })
  return bytes
}
