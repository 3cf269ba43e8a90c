/**
 * The answers to idempotent appends that a JSONL journal keeps (README "Fixed limits"): the most
 * recent `IDEMPOTENCY_KEYS` keys of its session and at most `ANSWER_BYTES` of their text, in the
 * memory of the process while the session is open. A key seen again finds its first answer.
 */
import type { KeptAnswer } from '../store.js'

/** Keys remembered per open session. */
export const IDEMPOTENCY_KEYS = 1000
/** Characters of answer text remembered per open session. */
export const ANSWER_BYTES = 8 * 1024 * 1024

export class AnswerMemory {
  /** Map order is age: the first key is the oldest. */
  readonly #answers = new Map<string, KeptAnswer>()
  #bytes = 0

  get (key: string): KeptAnswer | undefined { return this.#answers.get(key) }

  /** The kept answers among `answers`' keys, or `undefined` when none is kept. */
  answered (answers: readonly KeptAnswer[]): Map<string, KeptAnswer> | undefined {
    let found: Map<string, KeptAnswer> | undefined
    for (const { key } of answers) {
      const kept = this.#answers.get(key)
      if (kept !== undefined) (found ??= new Map()).set(key, kept)
    }
    return found
  }

  keep (answers: readonly KeptAnswer[]): void {
    for (const answer of answers) {
      this.#forget(answer.key)
      this.#answers.set(answer.key, answer)
      this.#bytes += answer.answer.length
    }
    for (const key of this.#answers.keys()) {
      if (this.#answers.size <= IDEMPOTENCY_KEYS && this.#bytes <= ANSWER_BYTES) break
      this.#forget(key)
    }
  }

  #forget (key: string): void {
    const old = this.#answers.get(key)
    if (old === undefined) return
    this.#answers.delete(key)
    this.#bytes -= old.answer.length
  }
}
