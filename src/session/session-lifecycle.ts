/**
 * Operations that rebind or replace a manager's session (SPEC.md §6.3): loading a file,
 * starting a new session, forking, branching into a new file and moving to another cwd.
 */
import { basename, join } from 'node:path'
import { EntryNotFound, MoveDestinationExists } from '../errors.js'
import { resolveInside } from '../storage/paths.js'
import { assertValidCwd, encodeCwd, sessionFileName } from './cwd.js'
import { branchedRecords, forkedRecords } from './fork-records.js'
import { migrateSessionEntries } from './migrate.js'
import { resolveBlobRefs } from './persist-transform.js'
import { classifyFile, classifyParsed, setAsideCorrupt, type ParsedFile } from './session-loader.js'
import type { ManagerParts } from './manager-parts.js'
import type { FileRecord } from './types.js'

/** Resolves a client-supplied path inside DATA_DIR or throws PATH_OUTSIDE_DATA_DIR (§2.1). */
export function insideDataDir (m: ManagerParts, path: string): string {
  return resolveInside(m.env.dataDir, path)
}

/**
 * §6.3 setSessionFile / §5.3: wait for queued writes and close the writer, classify the file
 * (an unsupported version fails here and changes nothing), clear the latch, bind, write the
 * breadcrumb, then load the file or create a fresh session at exactly this path.
 * `read`, when given, is the file as the caller already read it (its text, or parsed).
 */
export async function setSessionFile (m: ManagerParts, path: string, read?: string | ParsedFile): Promise<void> {
  const target = insideDataDir(m, path)
  await m.queue.closeWriter()
  const file = typeof read === 'object' ? classifyParsed(target, read) : await classifyFile(m.env.storage, target, read)
  m.queue.clearLatch()
  m.sessionFile = target
  await m.breadcrumb()
  if (file.kind === 'valid') {
    // The next append must not glue its line onto a torn fragment (§8.8); a migration
    // rewrite in loadRecords drops the fragment and with it this need.
    if (file.tornTail) m.queue.separateNextAppend(target)
    await loadRecords(m, target, file.records, file.refCandidates)
    return
  }
  if (file.kind === 'invalid') await setAsideCorrupt(m.env.storage, target, m.env.log)
  m.startFresh(undefined, target)
  m.flushed = true
  await m.queue.rewrite(target, m.state.records)
}

/**
 * Migrates (persisting at once when a step ran), resolves blob refs and indexes (§4.4, §5.3).
 * Only `refCandidates` can hold a ref, unless a migration changed the records.
 */
async function loadRecords (m: ManagerParts, target: string, records: FileRecord[], refCandidates: ReadonlySet<FileRecord>): Promise<void> {
  const migrated = migrateSessionEntries(records)
  if (migrated) await m.queue.rewrite(target, records)
  m.state.replace(records)
  await resolveRefs(m, migrated ? undefined : refCandidates)
  const title = m.state.header.title
  m.sessionName = typeof title === 'string' ? title : undefined
  m.flushed = true
}

/**
 * @internal resolves the blob refs of the manager's entries in memory (§9.5); of those among
 * `only` when given, the only records that can hold one.
 */
export async function resolveRefs (m: ManagerParts, only?: ReadonlySet<FileRecord>): Promise<void> {
  await resolveBlobRefs(only === undefined ? m.state.entries : [...only], m.env.blobs, (hash) => {
    m.env.log.warn({ hash }, 'Blob not found for image reference')
  })
}

/** §6.3 newSession: a new, empty, deferred session in the current directory. */
export async function newSession (m: ManagerParts, options?: { parentSession?: string }): Promise<string | undefined> {
  await m.queue.closeWriter()
  m.queue.clearLatch()
  m.startFresh(options?.parentSession)
  await m.breadcrumb()
  return m.sessionFile
}

/** §6.3 fork: a copy of every record under a new id and path, written at once. */
export async function fork (m: ManagerParts): Promise<{ oldSessionFile: string, newSessionFile: string } | undefined> {
  if (!m.env.persist || m.sessionFile === undefined) return undefined
  await m.queue.closeWriter()
  m.queue.clearLatch()
  const records = forkedRecords(m.state.records, m.cwd, m.state.header.title ?? m.sessionName)
  const header = records[0] as FileRecord
  const oldSessionFile = m.sessionFile
  const newSessionFile = join(m.sessionDir, sessionFileName(header.timestamp as string, header.id as string))
  const leaf = m.state.leafId
  m.state.replace(records)
  m.state.leafId = leaf
  m.sessionFile = newSessionFile
  m.flushed = true
  await m.queue.rewrite(newSessionFile, m.state.records)
  return { oldSessionFile, newSessionFile }
}

/**
 * §6.3 createBranchedSession: the path root→leafId without label entries, plus fresh label
 * entries for the kept targets that are labelled now, as a new session (new file at once).
 */
export async function createBranchedSession (m: ManagerParts, leafId: string): Promise<string | undefined> {
  if (!m.state.byId.has(leafId)) throw new EntryNotFound(leafId)
  m.queue.throwIfLatched()
  // The parent's id, as `fork` and `forkFrom` store it: never a server file path, which would
  // name where data lives and go stale when the directory moves (docs/compatibility.md).
  const records = branchedRecords(m.state.byId, m.state.labels, leafId, m.cwd, m.env.persist ? m.getSessionId() : undefined)
  const header = records[0] as FileRecord
  m.state.replace(records)
  m.sessionName = undefined
  if (!m.env.persist) return undefined
  const path = join(m.sessionDir, sessionFileName(header.timestamp as string, header.id as string))
  m.sessionFile = path
  m.flushed = true
  await m.queue.rewrite(path, m.state.records)
  return path
}

/**
 * §6.3 moveTo: the same file name under the new cwd's directory, header `cwd` updated, written
 * at once. Fails with MOVE_DESTINATION_EXISTS before changing anything.
 */
export async function moveTo (m: ManagerParts, newCwd: string): Promise<void> {
  if (newCwd === m.cwd) return
  assertValidCwd(newCwd)
  if (!m.env.persist || m.sessionFile === undefined) {
    m.cwd = newCwd
    m.sessionDir = join(m.env.dataDir, 'sessions', encodeCwd(newCwd))
    m.state.header.cwd = newCwd
    return
  }
  const { storage } = m.env
  const dir = insideDataDir(m, join(m.env.dataDir, 'sessions', encodeCwd(newCwd)))
  const target = join(dir, basename(m.sessionFile))
  if (storage.existsSync(target)) throw new MoveDestinationExists(target)
  storage.ensureDirSync(dir)
  await m.queue.closeWriter()
  // A failed rename leaves the manager exactly as it was, latch included.
  if (storage.existsSync(m.sessionFile)) await storage.rename(m.sessionFile, target)
  m.queue.clearLatch()
  m.cwd = newCwd
  m.sessionDir = dir
  m.state.header.cwd = newCwd
  m.sessionFile = target
  m.flushed = true
  await m.queue.rewrite(target, m.state.records)
  await m.breadcrumb()
}
