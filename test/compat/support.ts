/**
 * The compatibility suite's tools: a server on a real data directory, and the published agents'
 * own session readers (`@mariozechner/pi-coding-agent` under Node, `@oh-my-pi/pi-coding-agent`
 * under Bun) run in child processes on a copy of that directory, since opening may rewrite.
 */
import { storeStack } from '../helpers/stack.js'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { promisify } from 'node:util'
import { expect } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { FileBlobStore } from '../../src/blobs/index.js'
import { loadConfig } from '../../src/config.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { OMP_DIR } from '../setup/omp-reader.js'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '../..')
const READERS = join(import.meta.dirname, 'readers')
export const BUN = join(ROOT, 'node_modules', '.bin', 'bun')

export type Json = Record<string, unknown>
export type ReaderName = 'pi' | 'omp'
export const READER_NAMES: ReaderName[] = ['pi', 'omp']

/** A server over the disk storage; `stop` closes it, `cleanup` also removes the directory. */
export interface DiskServer {
  app: App
  dataDir: string
  stop: () => Promise<void>
  cleanup: () => Promise<void>
}

/** The fresh directory each data directory made by `startDiskServer` lies in, removed by any later server's `cleanup` too. */
const freshParents = new Map<string, string>()

/** Starts a server on `dataDir`, or on a fresh directory. Start it again on the same one to restart. */
export async function startDiskServer (dataDir?: string): Promise<DiskServer> {
  let dir = dataDir
  if (dir === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'ss-compat-'))
    dir = join(made, 'data')
    freshParents.set(dir, made)
  }
  const parent = freshParents.get(dir)
  mkdirSync(dir, { recursive: true })
  const blobs = new FileBlobStore(join(dir, 'blobs'))
  const stack = storeStack({ dataDir: dir, storage: new FileSessionStorage(), blobs })
  const app = await buildApp({ config: loadConfig({ STORAGE: 'disk', DATA_DIR: dir }), store: stack.store, blobs, registry: stack.registry, logger: false })
  let stopped = false
  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    await app.close()
    await stack.close()
  }
  return {
    app,
    dataDir: dir,
    stop,
    cleanup: async () => {
      await stop()
      rmSync(parent ?? dir, { recursive: true, force: true })
      freshParents.delete(dir)
    },
  }
}

/** What a reader's SessionManager sees in one file. */
export interface ReaderView {
  header: Json
  entries: Json[]
  leafId: string | null
  tree: { roots: string[], nodes: Array<{ id: string, children: string[], label?: string }> }
  context: Json
  contexts: Record<string, Json>
}

/** A scratch agent home: `agent/` is the agent directory (its `sessions/` and `blobs/`). */
export interface AgentHome {
  home: string
  agentDir: string
  cleanup: () => void
}

export function agentHome (): AgentHome {
  const home = mkdtempSync(join(tmpdir(), 'ss-agent-'))
  const agentDir = join(home, 'agent')
  mkdirSync(agentDir)
  return { home, agentDir, cleanup: () => { rmSync(home, { recursive: true, force: true }) } }
}

/** Runs one request through a reader script and returns its JSON answer. */
export async function runReader<T> (reader: ReaderName, request: Json, home: AgentHome, name = `${reader}-reader.mjs`): Promise<T> {
  const requestFile = join(home.home, `request-${Math.random().toString(16).slice(2)}.json`)
  writeFileSync(requestFile, JSON.stringify(request))
  // The Bun scripts run from beside their own install (test/setup/omp-reader.ts).
  const script = reader === 'omp' ? join(OMP_DIR, name) : join(READERS, name)
  const [cmd, args] = reader === 'omp' ? [BUN, [script, requestFile]] : [process.execPath, [script, requestFile]]
  const env = { ...process.env, HOME: home.home, PI_CODING_AGENT_DIR: home.agentDir, NO_COLOR: '1' }
  const { stdout } = await run(cmd, args, { cwd: home.home, env, maxBuffer: 512 * 1024 * 1024, timeout: 120_000 })
  const last = stdout.trim().split('\n').pop() ?? ''
  return JSON.parse(last) as T
}

/**
 * Copies `dataDir` into a fresh agent home (as its agent directory) and opens the copy of
 * `file` (a path inside `dataDir`) with `reader`.
 */
export async function readWith (reader: ReaderName, dataDir: string, file: string, leaves: Array<string | null> = []): Promise<ReaderView> {
  const home = agentHome()
  try {
    cpSync(dataDir, home.agentDir, { recursive: true })
    const copy = join(home.agentDir, relative(dataDir, file))
    return await runReader<ReaderView>(reader, { op: 'read', file: copy, leaves }, home)
  } finally {
    home.cleanup()
  }
}

/** The ids `reader` lists for `cwd` (its resume picker), from a copy of `dataDir`, sorted. */
export async function listWith (reader: ReaderName, dataDir: string, cwd: string): Promise<string[]> {
  const home = agentHome()
  try {
    cpSync(dataDir, home.agentDir, { recursive: true })
    const listed = await runReader<{ sessions: Array<{ id: string }> }>(reader, { op: 'list', cwd }, home)
    return listed.sessions.map((s) => s.id).sort()
  } finally {
    home.cleanup()
  }
}

/** Every `*.jsonl` under `DATA_DIR/sessions`, sorted. */
export function sessionFiles (dataDir: string): string[] {
  const root = join(dataDir, 'sessions')
  const out: string[] = []
  for (const dir of readdirSync(root)) {
    for (const name of readdirSync(join(root, dir))) if (name.endsWith('.jsonl')) out.push(join(root, dir, name))
  }
  return out.sort()
}

/** The file of session `id`: the one whose name ends in `_<id>.jsonl`. */
export function fileOf (dataDir: string, id: string): string {
  const file = sessionFiles(dataDir).find((f) => f.endsWith(`_${id}.jsonl`))
  expect(file, `file of ${id}`).toBeDefined()
  return file!
}

export async function http<T = any> (app: App, method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<{ status: number, body: T, raw: string }> {
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Json }) })
  let body: unknown
  try { body = res.json() } catch { body = undefined }
  return { status: res.statusCode, body: body as T, raw: res.body }
}

/** Every entry of a session through the paged route. */
export async function allEntries (app: App, id: string, blobs?: 'ref'): Promise<Json[]> {
  const out: Json[] = []
  for (let after = 0; ;) {
    const page = await http(app, 'GET', `/v1/sessions/${id}/entries?after=${after}&limit=1000${blobs === undefined ? '' : '&blobs=ref'}`)
    expect(page.status, page.raw).toBe(200)
    out.push(...page.body.entries)
    if (page.body.next === null) return out
    after = page.body.next
  }
}

/** The service's tree as the readers shape it: roots and children ids. */
export async function serviceTree (app: App, id: string): Promise<{ leafId: string | null, roots: string[], children: Record<string, string[]>, labels: Record<string, string> }> {
  const res = await http(app, 'GET', `/v1/sessions/${id}/tree`)
  expect(res.status, res.raw).toBe(200)
  const children: Record<string, string[]> = {}
  const labels: Record<string, string> = {}
  const ids = new Set<string>(res.body.nodes.map((n: Json) => n.id as string))
  const roots: string[] = []
  for (const node of res.body.nodes as Json[]) {
    children[node.id as string] = node.children as string[]
    if (typeof node.label === 'string') labels[node.id as string] = node.label
    const parent = node.parentId as string | null
    if (parent === null || parent === node.id || !ids.has(parent)) roots.push(node.id as string)
  }
  return { leafId: res.body.leafId, roots, children, labels }
}

/** Reader tree in the same shape. */
export function readerTree (view: ReaderView): { roots: string[], children: Record<string, string[]>, labels: Record<string, string> } {
  const children: Record<string, string[]> = {}
  const labels: Record<string, string> = {}
  for (const node of view.tree.nodes) {
    children[node.id] = node.children
    if (node.label !== undefined) labels[node.id] = node.label
  }
  return { roots: view.tree.roots, children, labels }
}

/** JSON round trip: what a value looks like on the wire (undefined keys gone). */
export function wire<T> (value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

export function readFixture (name: string): string {
  return readFileSync(join(ROOT, 'test', 'fixtures', name), 'utf8')
}

/** 1,200 bytes of a fixed pattern as base64 (1,600 characters: over the blob threshold). */
export function sampleImage (seed = 1): string {
  const bytes = Buffer.alloc(1200)
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + seed * 17) & 0xff
  return bytes.toString('base64')
}
