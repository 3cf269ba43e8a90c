/**
 * Text as the search indexes hold it, the same on disk (SQLite FTS5, unicode61) and on
 * PostgreSQL (`simple` text search configuration), and back again for snippets. Both engines cut
 * words at spaces and punctuation, which leaves two kinds of text unfindable:
 * - scripts written without spaces (Japanese, Chinese, Thai, Lao, Khmer, Myanmar): a run of them
 *   is one "word" to both engines. Runs are cut into words by ICU's dictionary segmentation
 *   (`Intl.Segmenter`), with a ZERO WIDTH SPACE between words, which both engines split at and a
 *   snippet drops again;
 * - emoji, which both engines drop as punctuation: each emoji (with its modifiers and ZWJ
 *   sequence) becomes one token, `ǝ` + its code points as 6 hex digits joined by `x` + `ǝ`
 *   (`😀` → `ǝ01f600ǝ`), which a snippet turns back into the emoji. A query's emoji matches the
 *   token as a prefix, so `👍` also finds `👍🏽`.
 * Paths, addresses and hyphenated words are cut into their words the same way (a ZERO WIDTH SPACE
 * after `.`, `/`, `\`, `:`, `@` and `-` where a word follows), as FTS5 cuts them and PostgreSQL
 * would not. Control characters become spaces (PostgreSQL text cannot hold NUL), lone surrogates U+FFFD,
 * and the snippet marks `«` `»` of the text itself `‹` `›`, so that a snippet's marks are only
 * ever the matches.
 */

/** Marks a match in a snippet. */
export const MARK_START = '«'
export const MARK_END = '»'
/** Cuts a snippet's fragments. */
export const ELLIPSIS = '…'

const ZWSP = '\u200b'
const EMOJI_MARK = 'ǝ'
const SPACELESS = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]+/gu
// eslint-disable-next-line no-misleading-character-class -- modifiers and VS16 are matched one by one on purpose
const EMOJI = /(?:\p{Extended_Pictographic}|\p{Regional_Indicator})(?:[\u{1F3FB}-\u{1F3FF}\uFE0F\u20E3]|\u200D(?:\p{Extended_Pictographic}|\p{Regional_Indicator}))*/gu
/** Punctuation inside paths, names and numbers: PostgreSQL's parser keeps `src/upload.ts` whole, FTS5 cuts it. */
const JOINERS = /([-./\\:@])(?=[\p{L}\p{N}])/gu
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g // eslint-disable-line no-control-regex
const EMOJI_TOKEN = /ǝ((?:[0-9a-f]{6}x)*[0-9a-f]{6})ǝ/g
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
const words = new Intl.Segmenter('ja', { granularity: 'word' })

/** The token of one emoji sequence (variation selectors left out). */
export function emojiToken (emoji: string): string {
  const points: string[] = []
  for (const ch of emoji) {
    const cp = ch.codePointAt(0) as number
    if (cp !== 0xfe0f) points.push(cp.toString(16).padStart(6, '0'))
  }
  return EMOJI_MARK + points.join('x') + EMOJI_MARK
}

function segmentRun (run: string): string {
  let out = ''
  for (const { segment } of words.segment(run)) out += (out === '' ? '' : ZWSP) + segment
  return out
}

/** `text` as the indexes hold it (see above). */
export function indexText (text: string): string {
  let out = text.replace(LONE_SURROGATE, '\ufffd').replace(CONTROL, ' ').replaceAll(MARK_START, '‹').replaceAll(MARK_END, '›')
    .replace(JOINERS, '$1' + ZWSP)
  if (/[^\u0000-\u00ff]/.test(out)) { // eslint-disable-line no-control-regex
    out = out.replace(EMOJI, (e) => ZWSP + emojiToken(e) + ZWSP)
    out = out.replace(SPACELESS, segmentRun)
  }
  return out
}

/** A snippet of indexed text as a reader sees it: word cuts dropped, emoji back. */
export function readableSnippet (snippet: string): string {
  return snippet.replaceAll(ZWSP, '').replace(EMOJI_TOKEN, (_m, hex: string) => {
    try {
      return String.fromCodePoint(...hex.split('x').map((h) => parseInt(h, 16)))
    } catch {
      return _m
    }
  })
}

/**
 * The words of a query term, as both engines cut them (letters, digits, marks and private-use
 * characters; the emoji token's `ǝ` is a letter), lower-cased.
 */
export function termWords (indexed: string): string[] {
  return (indexed.toLowerCase().match(/[\p{L}\p{N}\p{M}\p{Co}]+/gu) ?? []).filter((w) => /[\p{L}\p{N}\p{Co}]/u.test(w))
}
