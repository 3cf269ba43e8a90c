/**
 * `POST /v1/sessions/import` (API.md "Sessions"): a JSONL session file of any version becomes a
 * session of this server. It keeps the file's id (409 when taken) or, with `newId`, becomes a
 * `forkFrom` copy under a new id. Old versions are migrated; blobs are externalized on write.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { InvalidArgument, SessionExists } from '../errors.js'
import { assertValidCwd, encodeCwd, sessionFileName } from '../session/cwd.js'
import { nowIso } from '../session/ids.js'
import { assertSupportedVersion, migrateSessionEntries } from '../session/migrate.js'
import { isValidHeader, parseJsonlLenient, titleSlotLine } from '../session/parser.js'
import { prepareRecordForWrite, serializeRecord } from '../session/persist-transform.js'
import { SessionManager } from '../session/session-manager.js'
import type { FileRecord } from '../session/types.js'
import { writeAtomically } from '../session/write-queue.js'
import type { RegistryCore } from './registry-core.js'
import { assertClientId } from './session-operations.js'
import type { SessionView } from './types.js'

/** A header timestamp usable in a file name (SPEC.md §2.3); anything else is replaced by now. */
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/

export async function importSession (core: RegistryCore, text: string, newId: boolean): Promise<SessionView> {
  await core.ready
  const records = parseJsonlLenient(text)
  const header = records[0]
  if (!isValidHeader(header)) {
    throw new InvalidArgument('Body is not a session file: its first line must be a header {"type":"session","id":…}')
  }
  assertSupportedVersion('(import)', header)
  assertValidCwd(header.cwd, 'header cwd')
  if (newId) return await importAsCopy(core, records, header.cwd)
  const id = header.id
  assertClientId(id)
  if (!core.index.reserve(id)) throw new SessionExists(id)
  try {
    const migrated = migrateSessionEntries(records)
    const timestamp = typeof header.timestamp === 'string' && ISO_RE.test(header.timestamp) ? header.timestamp : nowIso()
    const path = join(core.dataDir, 'sessions', encodeCwd(header.cwd), sessionFileName(timestamp, id))
    if (core.storage.existsSync(path)) throw new SessionExists(id)
    const out = !migrated && isCanonical(text) ? text : await normalized(core, text, records)
    await writeAtomically(core.storage, path, out)
    const m = await SessionManager.open(path, undefined, core.storage, core.managerOptions())
    return core.view(core.adopt(m))
  } finally {
    core.index.release(id)
  }
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

/** Every record written as the service writes it (§9 applied); an agent's title slot stays line 1. */
async function normalized (core: RegistryCore, text: string, records: FileRecord[]): Promise<string> {
  let out = titleSlotLine(text)
  for (const record of records) out += serializeRecord(await prepareRecordForWrite(record, core.blobs))
  return out
}

/** `forkFrom` a staging copy: new id, `parentSession` = the file's id, every entry kept. */
async function importAsCopy (core: RegistryCore, records: FileRecord[], cwd: string): Promise<SessionView> {
  const staging = join(core.dataDir, 'sessions', encodeCwd(cwd), `.import-${randomBytes(8).toString('hex')}.tmp`)
  await core.storage.writeText(staging, records.map((r) => serializeRecord(r)).join(''))
  try {
    const m = await SessionManager.forkFrom(staging, cwd, undefined, core.storage, core.managerOptions())
    return core.view(core.adopt(m))
  } finally {
    await core.storage.unlink(staging).catch(() => {})
  }
}
