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
import { isValidHeader, parseJsonlLenient } from '../session/parser.js'
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
    migrateSessionEntries(records)
    const timestamp = typeof header.timestamp === 'string' && ISO_RE.test(header.timestamp) ? header.timestamp : nowIso()
    const path = join(core.dataDir, 'sessions', encodeCwd(header.cwd), sessionFileName(timestamp, id))
    if (core.storage.existsSync(path)) throw new SessionExists(id)
    let out = ''
    for (const record of records) out += serializeRecord(await prepareRecordForWrite(record, core.blobs))
    await writeAtomically(core.storage, path, out)
    const m = await SessionManager.open(path, undefined, core.storage, core.managerOptions())
    return core.view(core.adopt(m))
  } finally {
    core.index.release(id)
  }
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
