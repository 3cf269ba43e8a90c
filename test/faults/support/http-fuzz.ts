/**
 * The HTTP API fuzz: a real app (buildApp + listen on 127.0.0.1:0) over FileSessionStorage in a
 * temp DATA_DIR, driven by undici with generated and mutated requests (fuzz-requests.ts) at a
 * few dozen in flight. Requirements checked: no 5xx at all, every error is problem+json, the
 * server still answers afterwards, nothing appears outside DATA_DIR, and DATA_DIR holds only
 * its layout (sessions/, blobs/, terminal-sessions/, .lock), every session file whole.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, type Dirent } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join, relative, sep } from 'node:path'
import { pino } from 'pino'
import { Agent, request } from 'undici'
import { buildApp } from '../../../src/app.js'
import { FileBlobStore } from '../../../src/blobs/index.js'
import { loadConfig } from '../../../src/config.js'
import { acquireLock } from '../../../src/lock-file.js'
import { createRegistry } from '../../../src/registry/session-registry.js'
import { FileSessionStorage } from '../../../src/storage/index.js'
import { JsonlStore } from '../../../src/storage/jsonl/jsonl-store.js'
import { openStore, type OpenedStore } from '../../../src/storage/open-store.js'
import { createTestDatabase, type TestDatabase } from '../../helpers/pg.js'
import { RequestMaker, type FuzzRequest, type FuzzState } from './fuzz-requests.js'
import { makePools } from './fuzz-values.js'
import { createRng } from './prng.js'
import { inspectSessionFile, sessionFiles } from './session-files.js'

export interface HttpFuzzOptions {
  seed: number
  requests: number
  concurrency: number
  /** Mutation kinds to leave out (see MUTATIONS in fuzz-requests.ts). */
  skip?: string[]
  /** Stops sending new requests after this long, even before `requests` were sent. */
  maxMs?: number
  /** The store the app runs on (default `disk`); `postgres` in a database of the run's own. */
  storage?: 'disk' | 'postgres'
}

export interface HttpFuzzResult {
  seed: number
  /** Requests answered; `unsent` ones undici refused to build (invalid header bytes). */
  answered: number
  unsent: number
  ms: number
  statuses: Record<string, number>
  problems: string[]
  /** Error-level lines the server logged. */
  serverErrors: string[]
}

const MAX_PROBLEMS = 50

/** Every path below `root` (relative), skipping the subtree `skip`. */
function listTree (root: string, skip: string): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, d.name)
      if (p === skip) continue
      out.push(relative(root, p))
      if (d.isDirectory()) walk(p)
    }
  }
  walk(root)
  return out.sort()
}

/** Names containing `marker` directly in any of `dirs` (where an escape would most likely land). */
function markerHits (dirs: string[], marker: string): string[] {
  return dirs.flatMap((dir) => {
    try {
      return readdirSync(dir).filter((name) => name.includes(marker)).map((name) => join(dir, name))
    } catch {
      return []
    }
  })
}

/** Paths under DATA_DIR that break its layout (SPEC.md §2.1, §2.4). */
export function layoutViolations (dataDir: string): string[] {
  const bad: string[] = []
  const entries = (dir: string): Dirent[] => readdirSync(dir, { withFileTypes: true })
  for (const top of entries(dataDir)) {
    const p = join(dataDir, top.name)
    if (top.name === '.lock' && top.isFile()) continue
    if (top.name === '.session-store' && top.isDirectory()) continue // the store's index of the files
    if (!['sessions', 'blobs', 'terminal-sessions'].includes(top.name) || !top.isDirectory()) { bad.push(p); continue }
    for (const child of entries(p)) {
      const c = join(p, child.name)
      if (top.name === 'blobs' && !(child.isFile() && /^[0-9a-f]{64}$/.test(child.name))) bad.push(c)
      if (top.name === 'terminal-sessions' && !(child.isFile() && /^[A-Za-z0-9._-]{1,128}$/.test(child.name) && !['.', '..'].includes(child.name))) bad.push(c)
      if (top.name !== 'sessions') continue
      if (!child.isDirectory() || !/^--.*--$/.test(child.name)) { bad.push(c); continue }
      for (const file of entries(c)) {
        const ok = file.isFile() && (/\.jsonl$/.test(file.name) || /\.jsonl\.corrupt-/.test(file.name))
        if (!ok) bad.push(join(c, file.name))
      }
    }
  }
  return bad
}

interface Answer { status: number, type: string, text: string, etag: string | undefined }

/**
 * A live stream is opened with node:http and its socket destroyed once the head arrived: a real
 * client disconnect. (undici keeps the TCP connection of an aborted stream open, which leaves
 * the server holding a connection it cannot know is dead.)
 */
async function sendStream (base: string, req: FuzzRequest): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    // Framed like undici frames it: a body always comes with its length, whatever the method.
    const headers = req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) }
    const out = http.request(base + req.path, { method: req.method, headers, agent: false }, (res) => {
      const type = String(res.headers['content-type'] ?? '')
      if (type.startsWith('text/event-stream')) {
        out.destroy()
        resolve({ status: res.statusCode ?? 0, type, text: '', etag: undefined })
        return
      }
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('end', () => {
        resolve({ status: res.statusCode ?? 0, type, text, etag: undefined })
      })
    })
    out.on('error', reject)
    out.end(req.body)
  })
}

async function send (base: string, agent: Agent, req: FuzzRequest): Promise<Answer> {
  if ((req.path.split('?')[0] ?? '').endsWith('/events')) return await sendStream(base, req)
  const res = await request(base + req.path, { method: req.method, headers: req.headers, body: req.body, dispatcher: agent })
  const type = String(res.headers['content-type'] ?? '')
  if (type.startsWith('text/event-stream')) {
    res.body.destroy()
    return { status: res.statusCode, type, text: '', etag: undefined }
  }
  const text = await res.body.text().catch((err: Error) => `<body error ${err.message}>`)
  return { status: res.statusCode, type, text, etag: typeof res.headers.etag === 'string' ? res.headers.etag : undefined }
}

/** What is wrong with one answer, if anything. */
function checkAnswer (req: FuzzRequest, status: number, type: string, text: string): string | undefined {
  const what = () => `${req.method} ${req.path.slice(0, 200)} [${req.note}] → ${status} ${text.slice(0, 300)}`
  if (status >= 500) return `5xx: ${what()}`
  if (status < 400) return undefined
  if (!type.startsWith('application/problem+json')) return `error without problem+json (${type}): ${what()}`
  if (req.method === 'HEAD') return undefined
  try {
    const p = JSON.parse(text) as Record<string, unknown>
    if (p.status !== status || typeof p.code !== 'string' || typeof p.title !== 'string' || typeof p.type !== 'string') return `malformed problem: ${what()}`
  } catch {
    return `problem body is not JSON: ${what()}`
  }
  return undefined
}

/** Learns ids, etags and hashes from successful answers, so later requests hit real things. */
function learn (state: FuzzState, req: FuzzRequest, status: number, text: string, etag: string | undefined): void {
  if (status >= 300 || text === '' || text[0] !== '{') return
  let body: Record<string, any>
  try { body = JSON.parse(text) } catch { return }
  const header = body.header as { id?: unknown } | undefined
  if (typeof header?.id === 'string') {
    if (!state.sessions.includes(header.id)) state.sessions.push(header.id)
    if (etag !== undefined) state.etags.set(header.id, etag)
  }
  if (typeof body.hash === 'string' && !state.blobs.includes(body.hash)) state.blobs.push(body.hash)
  if (Array.isArray(body.entries) && req.method === 'POST') {
    let sid = req.path.split('/')[3] ?? ''
    try { sid = decodeURIComponent(sid) } catch {}
    const known = state.entries.get(sid) ?? []
    for (const e of body.entries) if (typeof e?.id === 'string') known.push(e.id)
    state.entries.set(sid, known.slice(-200))
  }
}

export async function runHttpFuzz (options: HttpFuzzOptions): Promise<HttpFuzzResult> {
  const { seed } = options
  const parent = mkdtempSync(join(tmpdir(), 'ss-fuzz-'))
  const dataDir = join(parent, 'a', 'b', 'data')
  mkdirSync(dataDir, { recursive: true })
  const marker = `fuzzmark-${seed}`
  const watched = [parent, dirname(parent), '/', '/etc', process.cwd(), dirname(process.cwd())]
  const before = listTree(parent, dataDir)
  const serverErrors: string[] = []
  const logger = pino({ level: 'error' }, { write: (line: string) => { serverErrors.push(line.slice(0, 500)) } })
  const lock = await acquireLock(join(dataDir, '.lock'))
  const db: TestDatabase | undefined = options.storage === 'postgres' ? await createTestDatabase() : undefined
  const opened: OpenedStore = db === undefined
    ? { store: JsonlStore.open({ dataDir, storage: new FileSessionStorage(), logger }), blobs: () => new FileBlobStore(join(dataDir, 'blobs')), close: async () => {} }
    : await openStore({ storage: 'postgres', dataDir, databaseUrl: db.url }, logger)
  const blobs = opened.blobs(dataDir, 'default')
  const registry = createRegistry({ tenant: 'default', dataDir, store: opened.store, blobs, logger })
  const config = loadConfig({ STORAGE: options.storage ?? 'disk', DATA_DIR: dataDir, DATABASE_URL: db?.url })
  const app = await buildApp({ config, store: opened.store, blobs, blobStores: opened.blobs, registry, logger })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const agent = new Agent({ connections: options.concurrency, headersTimeout: 30_000, bodyTimeout: 30_000 })

  const state: FuzzState = { sessions: [], entries: new Map(), etags: new Map(), blobs: [] }
  const maker = new RequestMaker(createRng(seed), makePools(seed), state, marker, options.skip)
  const statuses: Record<string, number> = {}
  const problems: string[] = []
  const problem = (p: string): void => { if (problems.length < MAX_PROBLEMS) problems.push(p) }
  let answered = 0
  let unsent = 0
  let next = 0
  const started = Date.now()
  const worker = async (): Promise<void> => {
    while (next < options.requests && Date.now() - started < (options.maxMs ?? Number.POSITIVE_INFINITY)) {
      next++
      const req = maker.next()
      let res: Answer
      try {
        res = await send(base, agent, req)
      } catch (err) {
        const code = String((err as { code?: unknown }).code)
        if (code === 'UND_ERR_INVALID_ARG' || (err as Error).name === 'InvalidArgumentError') { unsent++; continue }
        problem(`transport error ${code} ${(err as Error).message}: ${req.method} ${req.path.slice(0, 200)} [${req.note}]`)
        continue
      }
      answered++
      statuses[res.status] = (statuses[res.status] ?? 0) + 1
      const bad = checkAnswer(req, res.status, res.type, res.text)
      if (bad !== undefined) problem(bad)
      learn(state, req, res.status, res.text, res.etag)
    }
  }
  let ms = 0
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker))
    ms = Date.now() - started
    const health = await request(base + '/healthz', { dispatcher: agent }).then(async (r) => { await r.body.text(); return r.statusCode }, () => 0)
    if (health !== 200) problem(`server no longer healthy after the run: ${health}`)
  } finally {
    await agent.destroy()
    await app.close()
    await registry.close().catch((err: unknown) => problem(`registry close failed: ${String(err)}`))
    await opened.store.close()
    await opened.close()
    await db?.drop()
    await lock.release()
  }

  for (const p of layoutViolations(dataDir)) problem(`outside the DATA_DIR layout: ${relative(dataDir, p)}`)
  const after = listTree(parent, dataDir)
  for (const p of after) if (!before.includes(p)) problem(`new path outside DATA_DIR: ${p}`)
  for (const hit of markerHits(watched, marker)) problem(`escape: ${hit} exists`)
  for (const file of sessionFiles(dataDir)) for (const p of inspectSessionFile(file, { tree: false }).problems) problem(p)
  if (problems.length === 0) rmSync(parent, { recursive: true, force: true })
  else problems.push(`(DATA_DIR kept for inspection: ${dataDir}${sep})`)
  return { seed, answered, unsent, ms, statuses, problems, serverErrors }
}
