/**
 * The query language of `GET /v1/search` (API.md's terms in README.md): words, `"phrases"`,
 * `-excluded` words or phrases, and `prefix*`. Terms are ANDed. Text between quotes is one
 * phrase; a quote left open closes at the end. Any input either parses or is refused with the
 * reason (400): empty, too long, too many terms, no word to search for, only excluded terms.
 */
import { InvalidSearchQuery } from '../errors.js'
import { indexText, termWords } from './text.js'

/** Characters a query may have. */
export const MAX_QUERY_CHARS = 1000
/** Terms a query may have. */
export const MAX_QUERY_TERMS = 32

export interface SearchTerm {
  /** The term's text as the indexes hold text (text.ts): one word, or several as a phrase. */
  text: string
  /** Its words, lower-cased; at least one. */
  words: string[]
  /** Entries that match it are left out. */
  exclude: boolean
  /** The last word matches as a prefix. */
  prefix: boolean
}

const TERM = /(-?)"([^"]*)"?(\*?)|(-?)([^\s"]+)/gu

/** The terms of `q`. @throws InvalidSearchQuery (400) naming why. */
export function parseQuery (q: string): SearchTerm[] {
  if (q.trim() === '') throw new InvalidSearchQuery('the query is empty')
  if (q.length > MAX_QUERY_CHARS) throw new InvalidSearchQuery(`the query is longer than ${MAX_QUERY_CHARS} characters`)
  const terms: SearchTerm[] = []
  for (const m of q.matchAll(TERM)) {
    const quoted = m[2] !== undefined
    const raw = quoted ? (m[2] as string) : (m[5] as string)
    const exclude = (quoted ? m[1] : m[4]) === '-'
    let prefix = quoted ? m[3] === '*' : /\*$/.test(raw)
    const body = (quoted ? raw : raw.replace(/\*+$/, '')).replaceAll('*', ' ')
    let text = indexText(body).replace(/^[\s\u200b]+|[\s\u200b]+$/g, '')
    const words = termWords(text)
    if (words.length === 0) continue
    // An emoji matches with its modifiers too (text.ts): its token, less the closing mark, as a prefix.
    if (/ǝ[0-9a-fx]+ǝ$/.test(text)) {
      text = text.slice(0, -1)
      words[words.length - 1] = (words[words.length - 1] as string).slice(0, -1)
      prefix = true
    }
    terms.push({ text, words, exclude, prefix })
  }
  if (terms.length === 0) throw new InvalidSearchQuery('the query holds no word to search for')
  if (terms.length > MAX_QUERY_TERMS) throw new InvalidSearchQuery(`the query has more than ${MAX_QUERY_TERMS} terms`)
  if (terms.every((t) => t.exclude)) throw new InvalidSearchQuery('the query needs a term that is not excluded')
  return terms
}
