/**
 * `POST /v1/sessions/import` (API.md "Sessions"): a JSONL session file of any version becomes a
 * session of this tenant. It keeps the file's id (409 when taken) or, with `newId`, becomes a
 * `forkFrom` copy under a new id. Old versions are migrated; blobs are externalized on write.
 */
import { InvalidArgument } from '../errors.js'
import { assertValidCwd } from '../session/cwd.js'
import { createSessionId, nowIso } from '../session/ids.js'
import { listingItem } from '../session/listing-item.js'
import { assertSupportedVersion, migrateSessionEntries } from '../session/migrate.js'
import { isValidHeader, parseJsonlLenient, titleSlotLine } from '../session/parser.js'
import { prepareRecordForWrite } from '../session/persist-transform.js'
import { publicHeader } from '../session/public-header.js'
import { SessionModel } from '../session/session-model.js'
import { SessionSummary } from '../session/session-summary.js'
import type { FileRecord, SessionHeader } from '../session/types.js'
import { textOf } from '../storage/session-head.js'
import type { Journal, StoredLine } from '../storage/store.js'
import { OpenSession } from './open-session.js'
import { preciseNow, type RegistryCore } from './registry-core.js'
import { assertClientId, storeNew } from './session-operations.js'
import { resolveRefs, storedLines } from './session-load.js'
import type { SessionView } from './types.js'

export async function importSession (core: RegistryCore, text: string, newId: boolean): Promise<SessionView> {
  const records = parseSessionFile(text)
  const header = records[0] as SessionHeader
  if (newId) return await importAsCopy(core, records, header.cwd as string)
  assertClientId(header.id)
  const lines = await fileLines(core, text, records)
  const modifiedMs = preciseNow()
  const info = listingItem(publicHeader(records[0] as SessionHeader, core.dataDir), SessionSummary.of(records), modifiedMs)
  const journal = await core.store.create(core.tenant, { id: header.id, lines, saved: true, info })
  return core.view(core.adopt(await openStored(core, header.id, lines, journal, modifiedMs)))
}

/**
 * The records of a session file (header first, an agent's title line folded into it).
 * @throws InvalidArgument (400) when it is not one, or the §4.1 error for its version.
 */
export function parseSessionFile (text: string): FileRecord[] {
  const records = parseJsonlLenient(text)
  const header = records[0]
  if (!isValidHeader(header)) {
    throw new InvalidArgument('Body is not a session file: its first line must be a header {"type":"session","id":…}')
  }
  assertSupportedVersion('(import)', header)
  assertValidCwd(header.cwd, 'header cwd')
  return records
}

/**
 * The lines `text` (parsed as `records`, migrated here) is stored as: a current file byte for
 * byte, its inline images put in the blob store all the same (so that every ref `?blobs=ref`
 * shows resolves); any other normalized, §9 applied.
 */
export async function fileLines (core: RegistryCore, text: string, records: FileRecord[]): Promise<StoredLine[]> {
  const migrated = migrateSessionEntries(records)
  if (migrated || !isCanonical(text)) return await normalized(core, text, records)
  for (const record of records) await prepareRecordForWrite(record, core.blobs)
  return exactLines(text)
}

/** The open session of `lines` as stored (SPEC.md §9 applied), as any later load reads them. */
export async function openStored (core: RegistryCore, id: string, lines: readonly StoredLine[], journal: Journal, modifiedMs: number): Promise<OpenSession> {
  const stored = parseJsonlLenient(textOf(lines.map((l) => l.line)))
  await resolveRefs(core, stored.slice(1))
  const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l.line, 'utf8') + 1, 0)
  return new OpenSession(id, new SessionModel(stored), journal, modifiedMs, bytes)
}

/**
 * True when `text` is exactly what this service would write for its records, apart from the
 * §9 size and blob rules: LF-terminated compact JSON lines, one object each, no BOM, nothing
 * skipped. Such a file (a current agent's own) is stored byte for byte, so the export is the
 * agent's file again and its images stay where the agent put them (docs/compatibility.md).
 */
function isCanonical (text: string): boolean {
  if (text === '' || !text.endsWith('\n') || text.charCodeAt(0) === 0xfeff) return false
  for (let start = 0; start < text.length;) {
    const end = text.indexOf('\n', start)
    const line = text.slice(start, end)
    let value: unknown
    try { value = JSON.parse(line) } catch { return false }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || JSON.stringify(value) !== line) return false
    start = end + 1
  }
  return true
}

/** The lines of a canonical text as they are, each with the id of the entry it holds. */
function exactLines (text: string): StoredLine[] {
  return text.slice(0, -1).split('\n').map((line) => {
    const record = JSON.parse(line) as FileRecord
    return { id: typeof record.id === 'string' && record.type !== 'session' ? record.id : null, line }
  })
}

/** Every record written as the service writes it (§9 applied); an agent's title line stays line 1. */
async function normalized (core: RegistryCore, text: string, records: FileRecord[]): Promise<StoredLine[]> {
  const slot = titleSlotLine(text)
  const lines = await storedLines(records, core.blobs)
  return slot === '' ? lines : [{ id: null, line: slot.replace(/\r?\n$/, '') }, ...lines]
}

/** `forkFrom` the file: new id, `parentSession` = the file's id, every entry kept, migrated. */
async function importAsCopy (core: RegistryCore, records: FileRecord[], cwd: string): Promise<SessionView> {
  migrateSessionEntries(records)
  const source = records[0] as FileRecord
  const header: FileRecord = { type: 'session', version: 3, id: createSessionId(), timestamp: nowIso(), cwd, parentSession: source.id }
  if (typeof source.title === 'string') header.title = source.title
  const copy = [header, ...records.slice(1)]
  await resolveRefs(core, copy.slice(1))
  return core.view(await storeNew(core, copy, true))
}
