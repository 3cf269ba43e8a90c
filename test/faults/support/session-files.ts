/**
 * Reads session files straight from DATA_DIR, the way the library's loader does
 * (`parseJsonlLenient`), and reports what a fault must never leave behind: a complete line that
 * does not parse (a lost earlier record), a partial last line, a duplicate id, a missing parent.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isValidHeader, parseJsonlLenient } from '../../../src/session/parser.js'
import type { FileRecord } from '../../../src/session/types.js'

export interface InspectedFile {
  path: string
  records: FileRecord[]
  /** Entries (records after the header with a string type and non-empty string id), file order. */
  entries: Array<{ id: string, parentId: string | null }>
  /** The final fragment when the file does not end in `"\n"` (a torn last line), else undefined. */
  tornTail: string | undefined
  /** What is wrong with the file; empty when it is sound. */
  problems: string[]
}

export interface InspectOptions {
  /** A final fragment without `"\n"` is allowed (a crash may leave one, SPEC.md §8.8). */
  allowTornTail?: boolean
  /** Complete lines that may fail to parse: torn fragments known to have been left earlier. */
  knownFragments?: ReadonlySet<string>
  /** Also report duplicate ids and missing parents (default true; imports may carry both). */
  tree?: boolean
}

/** Every `*.jsonl` file below `DATA_DIR/sessions`, at any depth, sorted. */
export function sessionFiles (dataDir: string): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    let names
    try {
      names = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const d of names) {
      const p = join(dir, d.name)
      if (d.isDirectory()) walk(p)
      else if (d.isFile() && d.name.endsWith('.jsonl')) out.push(p)
    }
  }
  walk(join(dataDir, 'sessions'))
  return out.sort()
}

/** Checks one session file; see `InspectedFile.problems`. */
export function inspectSessionFile (path: string, options: InspectOptions = {}): InspectedFile {
  const text = readFileSync(path, 'utf8')
  const problems: string[] = []
  const records = parseJsonlLenient(text)
  const lines = text.split('\n')
  const last = lines.pop() ?? ''
  const tornTail = last === '' ? undefined : last
  if (tornTail !== undefined && options.allowTornTail !== true) {
    problems.push(`${path}: ends in a partial line (${JSON.stringify(tornTail.slice(0, 60))})`)
  }
  // Every complete line must be a record the parser keeps: anything else is a lost line.
  let complete = 0
  lines.forEach((line, i) => {
    if (parseJsonlLenient(line).length === 1) complete++
    else if (options.knownFragments?.has(line) !== true) problems.push(`${path}: line ${i + 1} does not parse (${JSON.stringify(line.slice(0, 60))})`)
  })
  const tailRecords = tornTail === undefined ? 0 : parseJsonlLenient(tornTail).length
  if (records.length !== complete + tailRecords) problems.push(`${path}: parser kept ${records.length} records of ${complete} good lines`)
  if (records.length > 0 && !isValidHeader(records[0])) problems.push(`${path}: first record is not a valid header`)
  const entries = records.slice(1)
    .filter((r) => typeof r.type === 'string' && typeof r.id === 'string' && r.id !== '')
    .map((r) => ({ id: r.id as string, parentId: typeof r.parentId === 'string' && r.parentId !== '' ? r.parentId : null }))
  if (options.tree !== false) problems.push(...treeProblems(path, entries))
  return { path, records, entries, tornTail, problems }
}

/** Duplicate ids and parents that name no entry. */
export function treeProblems (where: string, entries: ReadonlyArray<{ id: string, parentId: string | null }>): string[] {
  const problems: string[] = []
  const ids = new Set<string>()
  for (const e of entries) {
    if (ids.has(e.id)) problems.push(`${where}: id ${e.id} appears twice`)
    ids.add(e.id)
  }
  for (const e of entries) {
    if (e.parentId !== null && !ids.has(e.parentId)) problems.push(`${where}: parent ${e.parentId} of ${e.id} does not exist`)
  }
  return problems
}
