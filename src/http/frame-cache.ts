/**
 * Recently encoded SSE `entry` frames, shared by every subscriber of every session. Live
 * subscribers of one session all read the newest entries within moments of each other, so one
 * encoding (JSON.stringify plus framing) serves all of them. Bounded in bytes and in count, the
 * oldest frame going first, so a catch-up reader streaming a long history cannot grow it.
 */

interface Frame { seq: number, text: string }

export class FrameCache {
  readonly #frames = new Map<object, Frame>()
  readonly #maxChars: number
  readonly #maxFrames: number
  #chars = 0

  /** At most `maxChars` UTF-16 units (about bytes: frames are JSON) and `maxFrames` frames. */
  constructor (maxChars: number, maxFrames: number) {
    this.#maxChars = maxChars
    this.#maxFrames = maxFrames
  }

  get size (): number { return this.#frames.size }
  /** UTF-16 code units held. */
  get chars (): number { return this.#chars }

  /** The frame of `entry` at `seq`, made with `encode` and kept when not cached yet. */
  get (entry: object, seq: number, encode: () => string): string {
    const cached = this.#frames.get(entry)
    if (cached !== undefined && cached.seq === seq) return cached.text
    const text = encode()
    if (text.length > this.#maxChars / 4) return text // too big to be worth evicting others for
    if (cached !== undefined) this.#drop(entry, cached)
    this.#frames.set(entry, { seq, text })
    this.#chars += text.length
    this.#trim()
    return text
  }

  #trim (): void {
    for (const [entry, frame] of this.#frames) {
      if (this.#chars <= this.#maxChars && this.#frames.size <= this.#maxFrames) return
      this.#drop(entry, frame)
    }
  }

  #drop (entry: object, frame: Frame): void {
    this.#frames.delete(entry)
    this.#chars -= frame.text.length
  }
}
