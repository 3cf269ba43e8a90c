/**
 * The corpus of the search benchmark: sessions of agent-like entries (user questions, assistant
 * answers with tool calls, tool results) over a Zipf-distributed vocabulary, with words planted
 * in known numbers of entries (`needle<n>` in n entries, a phrase, Japanese text, an emoji), so
 * that queries of every selectivity have known answers. Deterministic for a seed.
 */

/** A small, fast PRNG (mulberry32). */
export function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'te', 'su', 'no', 'vi', 'de', 'pa', 'zu', 'qe', 'ho', 'bi', 'fa', 'gy', 'wo', 'xe', 'ju', 'ce']

/** `n` distinct pseudo-words, the most frequent first. */
export function vocabulary (n: number): string[] {
  const words: string[] = []
  for (let i = 0; words.length < n; i++) {
    let w = ''
    for (let x = i + 7; x > 0 || w.length < 4; x = Math.floor(x / SYLLABLES.length)) w += SYLLABLES[x % SYLLABLES.length]
    words.push(w)
  }
  return words
}

/** Draws word ranks with a Zipf distribution (exponent 1.07) over `n` words. */
export function zipf (n: number, random: () => number): () => number {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let i = 0; i < n; i++) cdf[i] = (sum += 1 / Math.pow(i + 1, 1.07))
  return () => {
    const x = random() * sum
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((cdf[mid] as number) < x) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

export interface CorpusOptions { sessions: number, entriesPerSession: number, seed: number }

/** Planted words and how many entries hold each. */
export const NEEDLES = [1, 10, 100, 1000, 10_000]
export const PHRASE = 'upload race condition'
export const PHRASE_ENTRIES = 500
export const JAPANESE = '東京都の設定ファイルを修正しました'
export const JAPANESE_ENTRIES = 200
export const EMOJI = '🚀'
export const EMOJI_ENTRIES = 300

export const VOCABULARY = vocabulary(30_000)

/**
 * The sessions as JSONL texts, one at a time (`session(i)`); entry k of all sessions is
 * `i * entriesPerSession + k`, and planted words go to entries spread evenly over all of them.
 */
export class Corpus {
  readonly total: number
  readonly #o: CorpusOptions
  readonly #plants = new Map<number, string[]>()

  constructor (o: CorpusOptions) {
    this.#o = o
    this.total = o.sessions * o.entriesPerSession
    const plant = (count: number, text: string, offset: number): void => {
      for (let j = 0; j < count; j++) {
        const at = (Math.floor(j * this.total / count) + offset) % this.total
        this.#plants.set(at, [...(this.#plants.get(at) ?? []), text])
      }
    }
    NEEDLES.forEach((n, k) => { plant(n, `needle${n}`, 17 + k * 3) })
    plant(PHRASE_ENTRIES, PHRASE, 5)
    plant(JAPANESE_ENTRIES, JAPANESE, 9)
    plant(EMOJI_ENTRIES, `shipped ${EMOJI}`, 13)
  }

  /** Session `i`: its id, cwd and JSONL text. */
  session (i: number): { id: string, cwd: string, text: string, created: string, entries: number } {
    const { entriesPerSession, seed } = this.#o
    const random = prng(seed + i * 7919)
    const word = zipf(VOCABULARY.length, random)
    const words = (n: number): string => Array.from({ length: n }, () => VOCABULARY[word()]).join(' ')
    const id = `bench-${String(i).padStart(6, '0')}`
    const cwd = `/work/project-${i % 50}`
    const start = Date.parse('2026-01-01T00:00:00.000Z') + i * 60_000
    const created = new Date(start).toISOString()
    const lines = [JSON.stringify({ type: 'session', version: 3, id, timestamp: created, cwd, title: `Session ${i} ${words(3)}` })]
    let parent: string | null = null
    for (let k = 0; k < entriesPerSession; k++) {
      const planted = (this.#plants.get(i * entriesPerSession + k) ?? []).join(' ')
      const entryId = `${i.toString(16).padStart(5, '0')}${k.toString(16).padStart(3, '0')}`
      const timestamp = new Date(start + k * 1000).toISOString()
      const kind = k % 3
      const message = kind === 0
        ? { role: 'user', content: `${words(12)} ${planted}`, timestamp: start + k }
        : kind === 1
          ? {
              role: 'assistant',
              content: [{ type: 'text', text: `${words(30)} ${planted}` },
                { type: 'toolCall', id: `t${entryId}`, name: 'read', arguments: { path: `src/${VOCABULARY[word()]}/${VOCABULARY[word()]}.ts` } }],
              provider: 'bench',
              model: 'bench',
              stopReason: 'toolUse',
              timestamp: start + k,
            }
          : { role: 'toolResult', toolCallId: `t${entryId}`, toolName: 'read', content: [{ type: 'text', text: `${words(25)} ${planted}` }], timestamp: start + k }
      lines.push(JSON.stringify({ type: 'message', id: entryId, parentId: parent, timestamp, message }))
      parent = entryId
    }
    return { id, cwd, text: lines.join('\n') + '\n', created, entries: entriesPerSession }
  }
}

/** The benchmark's 20 queries, from every entry to none, with what they exercise. */
export function queries (): Array<{ q: string, what: string }> {
  const w = VOCABULARY
  return [
    { q: w[0] as string, what: 'the most frequent word' },
    { q: w[3] as string, what: 'a word of rank 4' },
    { q: w[30] as string, what: 'a word of rank 31' },
    { q: w[300] as string, what: 'a word of rank 301' },
    { q: w[3000] as string, what: 'a word of rank 3001' },
    { q: w[25_000] as string, what: 'a word of rank 25001' },
    ...NEEDLES.map((n) => ({ q: `needle${n}`, what: `a word in ${n} entries` })),
    { q: `${w[0] as string} ${w[1] as string}`, what: 'two frequent words' },
    { q: `${w[10] as string} ${w[100] as string} ${w[1000] as string}`, what: 'three words of ranks 11, 101, 1001' },
    { q: `"${PHRASE}"`, what: `a phrase in ${PHRASE_ENTRIES} entries` },
    { q: `${(w[50] as string).slice(0, 4)}*`, what: 'a prefix' },
    { q: `needle1000 -${w[0] as string}`, what: 'a word, excluding the most frequent' },
    { q: '東京都', what: `Japanese, in ${JAPANESE_ENTRIES} entries` },
    { q: EMOJI, what: `an emoji, in ${EMOJI_ENTRIES} entries` },
    { q: 'zzzznotthere', what: 'no entry' },
  ]
}
