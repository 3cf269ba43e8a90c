/**
 * What every store needs to know of a session's text without understanding it: where its head
 * ends (the header line, behind an agent's title line when there is one), and the §11.2 display
 * name that a prefix read of it gives, kept as the text grows.
 */
import { basename } from 'node:path'
import { isValidHeader, isTitleSlot } from '../session/parser.js'
import { recentName } from '../session/recent-sessions.js'
import { PREFIX_READ_BYTES, type FileRecord } from '../session/types.js'

function parsed (line: string | undefined): FileRecord | undefined {
  if (line === undefined) return undefined
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as FileRecord : undefined
  } catch {
    return undefined
  }
}

/** How many of the first `lines` make the head: 2 behind an agent's title line, else 1. */
export function headLineCount (lines: readonly string[]): number {
  return lines.length > 1 && isTitleSlot(parsed(lines[0])) && isValidHeader(parsed(lines[1])) ? 2 : 1
}

/** The header record of a session's lines (behind a title line), or `undefined`. */
export function headerOf (lines: readonly string[]): FileRecord | undefined {
  const header = parsed(lines[headLineCount(lines) - 1])
  return isValidHeader(header) ? header : undefined
}

/** `text` cut after its head (the head's lines with their `"\n"`), as `[head, rest]`. */
export function splitHead (text: string): [string, string] {
  const first = text.indexOf('\n')
  if (first === -1) return [text, '']
  const second = text.indexOf('\n', first + 1)
  const lines = [text.slice(0, first), second === -1 ? text.slice(first + 1) : text.slice(first + 1, second)]
  const end = headLineCount(lines) === 2 ? (second === -1 ? text.length : second + 1) : first + 1
  return [text.slice(0, end), text.slice(end)]
}

/**
 * The first `PREFIX_READ_BYTES` of a session's text (or all of it while shorter), and the display
 * name they give. Grows with appends until it is long enough; a head change replaces its head.
 */
export class SessionPrefix {
  #text: string
  #name: string | undefined
  readonly #fileName: string

  /** `text`: at least the session's first `PREFIX_READ_BYTES` bytes, or all of it. */
  constructor (text: string, fileName: string) {
    this.#text = text
    this.#fileName = basename(fileName)
  }

  get text (): string { return this.#text }

  /** More text was appended to the session. */
  grow (text: string): void {
    // A string takes at least as many UTF-8 bytes as it has code units: counting is for short ones.
    if (this.#text.length >= PREFIX_READ_BYTES || Buffer.byteLength(this.#text, 'utf8') >= PREFIX_READ_BYTES) return
    this.#text += text
    this.#name = undefined
  }

  /** The session's head was replaced by `head` (its lines with their `"\n"`). */
  setHead (head: string): void {
    this.#text = head + splitHead(this.#text)[1]
    this.#name = undefined
  }

  /** The whole text was replaced. */
  reset (text: string): void {
    this.#text = text
    this.#name = undefined
  }

  name (): string {
    this.#name ??= recentName(this.#text, this.#fileName)
    return this.#name
  }
}

/** A session's lines as its text: each followed by `"\n"`, except a torn last one. */
export function textOf (lines: readonly string[], torn = false): string {
  if (lines.length === 0) return ''
  return lines.join('\n') + (torn ? '' : '\n')
}
