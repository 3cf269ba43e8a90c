/**
 * The ways to get a SessionManager (SPEC.md §6.2). Every factory takes a trailing options object
 * with the data root, the blob store, a logger and the client's terminal id.
 */
import { dirname, join, resolve } from 'node:path'
import { FileBlobStore } from '../blobs/file-blob-store.js'
import { MemoryBlobStore } from '../blobs/memory-blob-store.js'
import type { BlobStore } from '../blobs/types.js'
import { ForkSourceInvalid } from '../errors.js'
import { FileSessionStorage } from '../storage/file-session-storage.js'
import { MemorySessionStorage } from '../storage/memory-session-storage.js'
import { resolveInside } from '../storage/paths.js'
import type { SessionStorage } from '../storage/types.js'
import { resolveContinueTarget } from './breadcrumbs.js'
import { assertValidCwd, assertValidTerminalId, encodeCwd, sessionFileName } from './cwd.js'
import { createSessionId, nowIso } from './ids.js'
import { deepCopy } from './json-text.js'
import { silentLogger, type Logger } from './logger.js'
import { migrateSessionEntries } from './migrate.js'
import { classifyFile, parseFile } from './session-loader.js'
import { resolveRefs, setSessionFile } from './session-lifecycle.js'
import type { MakeManager, ManagerEnv, ManagerParts } from './manager-parts.js'
import type { FileRecord } from './types.js'

export interface ManagerOptions {
  /** Data root; default `DATA_DIR` from the environment, else `./data`, resolved against the cwd. */
  dataDir?: string
  /** Default: `<dataDir>/blobs` on disk with the default storage, in memory with any other. */
  blobs?: BlobStore
  logger?: Logger
  /** Client-supplied terminal id (§2.4); enables breadcrumbs. */
  terminalId?: string
  /** `open` only: the cwd to use when the file's header has none. */
  fallbackCwd?: string
}

/** What `create` may preset on the new session's header (the service's `POST /v1/sessions`). */
export interface CreateOptions extends ManagerOptions {
  /** A caller-chosen session id instead of a new UUIDv7 (the caller checks its form). */
  sessionId?: string
  /** Header `parentSession` (§3.3: opaque lineage marker). */
  parentSession?: string
  /** Header `title`; it travels with the first flush like `setSessionName`. */
  title?: string
}

function envFor (storage: SessionStorage | undefined, options: ManagerOptions, persist: boolean): ManagerEnv {
  const dataDir = resolve(options.dataDir ?? process.env.DATA_DIR ?? './data')
  if (options.terminalId !== undefined) assertValidTerminalId(options.terminalId)
  const blobs = options.blobs ?? (storage === undefined && persist ? new FileBlobStore(join(dataDir, 'blobs')) : new MemoryBlobStore())
  const env: ManagerEnv = { dataDir, storage: storage ?? new FileSessionStorage(), blobs, log: options.logger ?? silentLogger, persist }
  if (options.terminalId !== undefined) env.terminalId = options.terminalId
  return env
}

/** `sessionDir` given → checked inside DATA_DIR; else the cwd's directory (§2.2). */
function dirFor (env: ManagerEnv, cwd: string, sessionDir: string | undefined): string {
  return resolveInside(env.dataDir, sessionDir ?? join(env.dataDir, 'sessions', encodeCwd(cwd)))
}

/** §6.2 create: a new deferred session in memory; the breadcrumb, but no session file. */
export async function create<M extends ManagerParts> (make: MakeManager<M>, cwd: string, sessionDir?: string, storage?: SessionStorage, options: CreateOptions = {}): Promise<M> {
  assertValidCwd(cwd)
  const env = envFor(storage, options, true)
  const dir = dirFor(env, cwd, sessionDir)
  env.storage.ensureDirSync(dir)
  const m = make(env, cwd, dir)
  if (options.sessionId !== undefined || options.parentSession !== undefined) m.startFresh(options.parentSession, undefined, options.sessionId)
  if (options.title !== undefined) await m.setSessionName(options.title)
  await m.breadcrumb()
  return m
}

/** §6.2 open: learns the cwd from the file's header, then `setSessionFile(path)`. */
export async function open<M extends ManagerParts> (make: MakeManager<M>, path: string, sessionDir?: string, storage?: SessionStorage, options: ManagerOptions = {}): Promise<M> {
  const env = envFor(storage, options, true)
  const target = resolveInside(env.dataDir, path)
  // One streaming read serves both the cwd (from the first line) and the load.
  const file = await parseFile(env.storage, target)
  const first = file.first
  const cwd = typeof first?.cwd === 'string' ? first.cwd : (options.fallbackCwd ?? process.cwd())
  const dir = sessionDir === undefined ? dirname(target) : resolveInside(env.dataDir, sessionDir)
  const m = make(env, cwd, dir)
  await setSessionFile(m, target, file)
  return m
}

/** §11.3 continueRecent: the terminal's breadcrumb, else the newest session, else a new one. */
export async function continueRecent<M extends ManagerParts> (make: MakeManager<M>, cwd: string, sessionDir?: string, storage?: SessionStorage, options: ManagerOptions = {}): Promise<M> {
  assertValidCwd(cwd)
  const env = envFor(storage, options, true)
  const dir = dirFor(env, cwd, sessionDir)
  const path = await resolveContinueTarget(env.storage, { dataDir: env.dataDir, cwd, terminalId: env.terminalId, sessionDir: dir })
  if (path === null) return await create(make, cwd, dir, env.storage, { ...options, blobs: env.blobs })
  const m = make(env, cwd, dir)
  await setSessionFile(m, path)
  return m
}

/** §6.2 inMemory: never writes; ids, tree, leaf and context behave as for persisting managers. */
export function inMemory<M extends ManagerParts> (make: MakeManager<M>, cwd = process.cwd(), storage: SessionStorage = new MemorySessionStorage(), options: ManagerOptions = {}): M {
  const env = envFor(storage, options, false)
  return make(env, cwd, join(env.dataDir, 'sessions', encodeCwd(cwd)))
}

/**
 * §6.2 forkFrom: a migrated copy of another session file (every branch, ids kept) as a new
 * session of `cwd`, written at once; the source is never written.
 */
export async function forkFrom<M extends ManagerParts> (make: MakeManager<M>, sourcePath: string, cwd: string, sessionDir?: string, storage?: SessionStorage, options: ManagerOptions = {}): Promise<M> {
  assertValidCwd(cwd)
  const env = envFor(storage, options, true)
  const source = resolveInside(env.dataDir, sourcePath)
  const file = await classifyFile(env.storage, source)
  if (file.kind !== 'valid') throw new ForkSourceInvalid(source, file.kind)
  const copy = deepCopy(file.records)
  migrateSessionEntries(copy)
  const sourceHeader = copy[0] as FileRecord
  const id = createSessionId()
  const timestamp = nowIso()
  const header: FileRecord = { type: 'session', version: 3, id, timestamp, cwd, parentSession: sourceHeader.id }
  if (typeof sourceHeader.title === 'string') header.title = sourceHeader.title
  const dir = dirFor(env, cwd, sessionDir)
  const m = make(env, cwd, dir)
  m.state.replace([header, ...copy.slice(1)])
  m.sessionName = typeof header.title === 'string' ? header.title : undefined
  await resolveRefs(m)
  m.sessionFile = join(dir, sessionFileName(timestamp, id))
  m.flushed = true
  await m.queue.rewrite(m.sessionFile, m.state.records)
  await m.breadcrumb()
  return m
}
