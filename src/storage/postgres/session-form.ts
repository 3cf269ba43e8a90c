/**
 * When a file's text can be kept as session rows (schema.ts: `ss_sessions`, `ss_entries`)
 * without losing a byte: a header line, then entry lines, each a JSON object with a string `id`
 * unique in the file, every line ending in `"\n"`. The rows hold each line exactly as given, so
 * the header line and the entry lines in order give the text back byte for byte. Anything else
 * (a torn last line, a line that is not JSON, a repeated id) stays a plain file.
 */

export interface EntryLine {
  id: string
  /** The line exactly as the file holds it, without its `"\n"`. */
  line: string
}

export interface SessionForm {
  /** The header line, without its `"\n"`. */
  header: string
  id: string
  cwd: string
  title: string | null
  entries: EntryLine[]
}

function objectOf (line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

/** The `id` of every line of `text` that is an object with a string one. */
export function lineIds (text: string): Set<string> {
  const ids = new Set<string>()
  for (const line of text.split('\n')) {
    const id = line === '' ? undefined : objectOf(line)?.id
    if (typeof id === 'string') ids.add(id)
  }
  return ids
}

/** The lines of `text` as entries (`[]` for ""), or undefined when one is not an entry line. */
export function entryLines (text: string): EntryLine[] | undefined {
  if (text === '') return []
  if (!text.endsWith('\n')) return undefined
  const entries: EntryLine[] = []
  const seen = new Set<string>()
  for (let start = 0; start < text.length;) {
    const end = text.indexOf('\n', start)
    const line = text.slice(start, end)
    const id = objectOf(line)?.id
    if (typeof id !== 'string' || seen.has(id)) return undefined
    seen.add(id)
    entries.push({ id, line })
    start = end + 1
  }
  return entries
}

/** `text` as a session header and entries, or undefined when it does not have that form. */
export function sessionForm (text: string): SessionForm | undefined {
  const end = text.indexOf('\n')
  if (end === -1) return undefined
  const header = text.slice(0, end)
  const fields = objectOf(header)
  if (fields?.type !== 'session' || typeof fields.id !== 'string' || fields.id === '') return undefined
  const entries = entryLines(text.slice(end + 1))
  if (entries === undefined) return undefined
  const cwd = typeof fields.cwd === 'string' ? fields.cwd : ''
  const title = typeof fields.title === 'string' ? fields.title : null
  return { header, id: fields.id, cwd, title, entries }
}
