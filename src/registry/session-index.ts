/**
 * Session id → file path, for every session this server knows (API.md "Conventions": an id from
 * a URL is only ever a key here, never part of a path). Built at start-up from the headers of
 * `DATA_DIR/sessions/<dir>/*.jsonl` with prefix reads, then kept current by the registry.
 */
import { basename, join, resolve } from 'node:path'
import type { Logger } from '../session/logger.js'
import { isValidHeader, parseJsonlLenient } from '../session/parser.js'
import { PREFIX_READ_BYTES } from '../session/types.js'
import type { SessionStorage } from '../storage/types.js'

/** How many asynchronous header reads run at once during the start-up scan. */
const SCAN_CONCURRENCY = 64
/** How many synchronous header reads run between two turns of the event loop. */
const SCAN_BATCH = 256

export class SessionIndex {
  readonly #paths = new Map<string, string>()
  readonly #ids = new Map<string, string>()
  /** Ids being created or imported right now: taken, although not indexed yet. */
  readonly #reserved = new Set<string>()

  get size (): number { return this.#paths.size }
  get (id: string): string | undefined { return this.#paths.get(id) }
  has (id: string): boolean { return this.#paths.has(id) || this.#reserved.has(id) }
  idForPath (path: string): string | undefined { return this.#ids.get(resolve(path)) }
  entries (): IterableIterator<[string, string]> { return this.#paths.entries() }

  set (id: string, path: string): void {
    const old = this.#paths.get(id)
    if (old !== undefined) this.#ids.delete(old)
    const full = resolve(path)
    this.#paths.set(id, full)
    this.#ids.set(full, id)
  }

  delete (id: string): void {
    const old = this.#paths.get(id)
    if (old !== undefined && this.#ids.get(old) === id) this.#ids.delete(old)
    this.#paths.delete(id)
  }

  /** Claims `id` for a create or import; false when it is taken. Release with `release`. */
  reserve (id: string): boolean {
    if (this.has(id)) return false
    this.#reserved.add(id)
    return true
  }

  release (id: string): void { this.#reserved.delete(id) }
}

/** The header id of a session file, from a prefix read (the whole file when line 1 is longer). */
export async function readSessionId (storage: SessionStorage, path: string): Promise<string | undefined> {
  try {
    return await idFromPrefix(storage, path, await storage.readTextPrefix(path, PREFIX_READ_BYTES))
  } catch {
    return undefined
  }
}

/** `readSessionId` with a synchronous prefix read (`readTextPrefixSync`); only a header longer than the prefix waits. */
function sessionIdOf (storage: SessionStorage, read: (path: string, maxBytes: number) => string, path: string): string | undefined | Promise<string | undefined> {
  try {
    return idFromPrefix(storage, path, read(path, PREFIX_READ_BYTES))
  } catch {
    return undefined
  }
}

function idFromPrefix (storage: SessionStorage, path: string, prefix: string): string | undefined | Promise<string | undefined> {
  if (!prefix.includes('\n') && Buffer.byteLength(prefix, 'utf8') >= PREFIX_READ_BYTES) {
    return storage.readText(path).then(headerId, () => undefined)
  }
  return headerId(prefix)
}

function headerId (text: string): string | undefined {
  // The header is line 1, or line 2 behind an agent's title slot (parseJsonlLenient folds it).
  const first = text.indexOf('\n')
  const second = first === -1 ? -1 : text.indexOf('\n', first + 1)
  const header = parseJsonlLenient(second === -1 ? text : text.slice(0, second))[0]
  return isValidHeader(header) ? header.id : undefined
}

/**
 * The header id of every file, in order. With `readTextPrefixSync` the prefixes are read
 * `SCAN_BATCH` files at a time between turns of the event loop (a synchronous open, read and
 * close costs a fraction of the same calls through the thread pool, and the server keeps
 * answering meanwhile); otherwise `SCAN_CONCURRENCY` asynchronous reads run at once.
 */
async function readSessionIds (storage: SessionStorage, files: string[]): Promise<Array<string | undefined>> {
  const ids = new Array<string | undefined>(files.length)
  const read = storage.readTextPrefixSync?.bind(storage)
  if (read !== undefined) {
    const waiting: Array<Promise<void>> = []
    for (let i = 0; i < files.length; i++) {
      if (i > 0 && i % SCAN_BATCH === 0) await new Promise((resolve) => setImmediate(resolve))
      const id = sessionIdOf(storage, read, files[i] as string)
      if (id instanceof Promise) waiting.push(id.then((value) => { ids[i] = value }))
      else ids[i] = id
    }
    await Promise.all(waiting)
    return ids
  }
  let next = 0
  const worker = async (): Promise<void> => {
    for (let i = next++; i < files.length; i = next++) ids[i] = await readSessionId(storage, files[i] as string)
  }
  await Promise.all(Array.from({ length: Math.min(SCAN_CONCURRENCY, files.length) }, worker))
  return ids
}

/**
 * Scans `DATA_DIR/sessions/*\/*.jsonl` (directories whose name starts with `.` are skipped).
 * When two files claim one id, the more recently modified one wins and a warning is logged.
 */
export async function scanSessions (storage: SessionStorage, dataDir: string, log: Logger): Promise<SessionIndex> {
  const root = join(dataDir, 'sessions')
  const files: string[] = []
  for (const dir of storage.listDirsSync(root)) {
    if (basename(dir).startsWith('.')) continue
    files.push(...storage.listFilesSync(dir, '*.jsonl').filter((p) => p.endsWith('.jsonl')))
  }
  const ids = await readSessionIds(storage, files)
  const index = new SessionIndex()
  files.forEach((path, i) => {
    const id = ids[i]
    if (id === undefined) return
    const other = index.get(id)
    if (other !== undefined && mtimeOf(storage, other) >= mtimeOf(storage, path)) {
      log.warn({ sessionId: id, kept: other, ignored: path }, 'Two session files share one id')
      return
    }
    if (other !== undefined) log.warn({ sessionId: id, kept: path, ignored: other }, 'Two session files share one id')
    index.set(id, path)
  })
  return index
}

function mtimeOf (storage: SessionStorage, path: string): number {
  try {
    return storage.statSync(path).mtimeMs
  } catch {
    return -Infinity
  }
}
