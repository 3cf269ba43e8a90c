/**
 * One round of the crash fault: the real server process (compiled src/server.ts) is killed with SIGKILL
 * in the middle of concurrent writers, restarted on the same DATA_DIR and checked, then written
 * to, stopped cleanly and checked again (API.md "persisted", SPEC.md §8.4, §8.8). Shared by
 * test/faults/crash.process.test.ts (a few rounds) and bench/faults/crash.ts (many).
 */
import { appendFileSync, readFileSync } from 'node:fs'
import { startServer, type ServerProcess } from '../../helpers/server-process.js'
import { allEntries, assistantMessage, call, userMessage, type JsonAnswer } from './http.js'
import { createRng, type Rng } from './prng.js'
import { inspectSessionFile, sessionFiles, treeProblems } from './session-files.js'

export interface CrashRoundOptions {
  dataDir: string
  seed: number
  /** Concurrent writers (default 20); writer 0 keeps creating new sessions. */
  writers?: number
  /** Sessions the other writers share (default 4). */
  sessions?: number
  /** The compiled server to run (default: the test run's build). */
  serverEntry?: string
}

export interface CrashRoundResult {
  seed: number
  /** Entries acknowledged `persisted: true` before the kill. */
  acknowledged: number
  /** Sessions checked after the restart (shared plus created ones). */
  sessions: number
  /** Files that ended in a partial line right after the kill (before any injection). */
  naturalTornTails: number
  /** Whether this round wrote a torn fragment itself, to exercise the loader end to end. */
  injectedTornTail: boolean
  /** Everything that went wrong; empty when the round passed. */
  problems: string[]
  ms: number
}

interface Tracked {
  /** Entry ids acknowledged `persisted: true`, per session id. */
  acked: Map<string, Set<string>>
  problems: string[]
  /** Set just before the kill: from then on, a failed connection is expected. */
  killed: boolean
}

const TORN_MARKER = 'torn-by-the-crash-test'

function ack (t: Tracked, sessionId: string, res: JsonAnswer): void {
  if (res.status !== 201) {
    t.problems.push(`append to ${sessionId} answered ${res.status} ${JSON.stringify(res.json)}`)
    return
  }
  // Every session here is flushed (its first entry is an assistant message): each append is
  // durable before it is answered, so `persisted: false` is a broken promise, not a detail.
  if (res.json.persisted !== true) {
    t.problems.push(`append to ${sessionId} answered persisted: ${JSON.stringify(res.json.persisted)}`)
    return
  }
  const set = t.acked.get(sessionId) ?? new Set<string>()
  for (const e of res.json.entries as Array<{ id: string }>) set.add(e.id)
  t.acked.set(sessionId, set)
}

/** A new session that is flushed (its first entry is an assistant message), acknowledged. */
async function createFlushed (base: string, t: Tracked, cwd: string): Promise<string> {
  const created = await call(base, 'POST', '/v1/sessions', { cwd })
  if (created.status !== 201) throw new Error(`create answered ${created.status}`)
  const id = created.json.header.id as string
  ack(t, id, await call(base, 'POST', `/v1/sessions/${id}/entries`, assistantMessage('hello')))
  return id
}

function batchBody (rng: Rng, tag: string): unknown {
  if (rng.chance(0.6)) return userMessage(tag)
  const n = rng.int(2, 5)
  const entries = Array.from({ length: n }, (_, i) => rng.chance(0.5)
    ? assistantMessage(`${tag}.${i}`)
    : { type: 'custom', customType: 'crash-test', data: { tag, i, pad: 'x'.repeat(rng.int(0, 2000)) } })
  return { entries }
}

/** Connection failures of undici: what a writer meets once the server is gone. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])

/** A writer's end: quiet for a failed connection after the kill, a problem for anything else. */
function writerEnded (t: Tracked, err: unknown): void {
  const code = String((err as { code?: unknown }).code)
  if (t.killed && CONNECTION_ERRORS.has(code)) return
  t.problems.push(`a writer failed ${t.killed ? 'after' : 'before'} the kill: ${code} ${(err as Error).message}`)
}

/** Writers run until the server goes away; only a failed connection after the kill ends them quietly. */
async function runWriters (server: ServerProcess, rng: Rng, t: Tracked, shared: string[], writers: number): Promise<void> {
  const base = server.baseUrl
  const creator = async (): Promise<void> => {
    for (let i = 0; i < 40; i++) await createFlushed(base, t, `/crash/created/${i % 3}`)
  }
  const writer = async (w: number): Promise<void> => {
    const id = shared[w % shared.length] as string
    for (let i = 0; ; i++) ack(t, id, await call(base, 'POST', `/v1/sessions/${id}/entries`, batchBody(rng, `w${w}-${i}`)))
  }
  await Promise.all([creator(), ...Array.from({ length: writers - 1 }, async (_, w) => await writer(w + 1))]
    .map(async (p) => { await p.catch((err: unknown) => { writerEnded(t, err) }) }))
}

/** Verifies every tracked session over HTTP: acknowledged entries, ids, parents, context, tree. */
async function verifyOverHttp (base: string, t: Tracked, where: string): Promise<void> {
  const listing = await call(base, 'GET', '/v1/sessions?includeEmpty=true&limit=1000')
  if (listing.status !== 200) t.problems.push(`${where}: listing answered ${listing.status}`)
  const listed = new Set((listing.json?.sessions ?? []).map((s: { id: string }) => s.id))
  for (const [id, acked] of t.acked) {
    if (!listed.has(id)) t.problems.push(`${where}: session ${id} missing from the listing`)
    let entries
    try {
      entries = await allEntries(base, id)
    } catch (err) {
      t.problems.push(`${where}: ${(err as Error).message}`)
      continue
    }
    const ids = new Set(entries.map((e) => e.id))
    for (const a of acked) if (!ids.has(a)) t.problems.push(`${where}: acknowledged entry ${a} of ${id} lost`)
    t.problems.push(...treeProblems(`${where} ${id}`, entries))
    for (const route of ['context', 'tree']) {
      const res = await call(base, 'GET', `/v1/sessions/${id}/${route}`)
      if (res.status !== 200) t.problems.push(`${where}: GET ${route} of ${id} answered ${res.status}`)
    }
  }
}

interface FileFacts {
  /** Header id → file path. */
  paths: Map<string, string>
  /** File path → its torn last line. */
  torn: Map<string, string>
}

/** File-level checks; returns header id → path and the torn tails found. */
function verifyFiles (dataDir: string, t: Tracked, where: string, known: ReadonlySet<string>): FileFacts {
  const paths = new Map<string, string>()
  const torn = new Map<string, string>()
  for (const path of sessionFiles(dataDir)) {
    const f = inspectSessionFile(path, { allowTornTail: true, knownFragments: known })
    t.problems.push(...f.problems.map((p) => `${where}: ${p}`))
    if (f.tornTail !== undefined) torn.set(path, f.tornTail)
    const id = f.records[0]?.id
    if (typeof id === 'string') paths.set(id, path)
  }
  return { paths, torn }
}

async function stopCleanly (server: ServerProcess, t: Tracked, where: string): Promise<void> {
  server.child.kill('SIGTERM')
  const [code] = await server.exited
  if (code !== 0) t.problems.push(`${where}: clean stop exited with ${code}`)
  const errors = server.output.filter((line) => /"level":(50|60)/.test(line))
  for (const line of errors) t.problems.push(`${where}: server logged ${line.slice(0, 300)}`)
}

/** Phase 1: the writers run until a random number of appends were acknowledged, then kill -9. */
async function killDuringWriters (options: CrashRoundOptions, rng: Rng, t: Tracked): Promise<string[]> {
  const server = await startServer({ DATA_DIR: options.dataDir }, undefined, options.serverEntry)
  const shared: string[] = []
  for (let i = 0; i < (options.sessions ?? 4); i++) shared.push(await createFlushed(server.baseUrl, t, `/crash/shared/${i}`))
  const running = runWriters(server, rng, t, shared, options.writers ?? 20)
  const killAt = rng.int(100, 400)
  while (ackCount(t) < killAt) await new Promise((resolve) => setTimeout(resolve, 2))
  await new Promise((resolve) => setTimeout(resolve, rng.int(0, 15)))
  t.killed = true
  server.child.kill('SIGKILL')
  const [, signal] = await server.exited
  if (signal !== 'SIGKILL') t.problems.push(`server ended with ${signal} instead of SIGKILL`)
  await running
  return shared
}

const ackCount = (t: Tracked): number => [...t.acked.values()].reduce((n, s) => n + s.size, 0)

/** Phase 3: after the restart, every session serves exactly the entries its file holds. */
async function compareWithFiles (base: string, t: Tracked, paths: Map<string, string>, known: ReadonlySet<string>): Promise<void> {
  for (const [id, path] of paths) {
    if (!t.acked.has(id)) continue
    const onDisk = inspectSessionFile(path, { allowTornTail: true, knownFragments: known }).entries.map((e) => e.id)
    const served = (await allEntries(base, id).catch(() => [])).map((e) => e.id)
    if (JSON.stringify(onDisk) !== JSON.stringify(served)) t.problems.push(`after restart: ${id} serves other entries than its file holds`)
  }
}

export async function runCrashRound (options: CrashRoundOptions): Promise<CrashRoundResult> {
  const started = Date.now()
  const { dataDir } = options
  const t: Tracked = { acked: new Map(), problems: [], killed: false }
  const shared = await killDuringWriters(options, createRng(options.seed), t)
  const acknowledged = ackCount(t)

  // 2. What the kill left on disk. A torn last line is allowed here; make one if none appeared.
  const afterKill = verifyFiles(dataDir, t, 'after kill', new Set())
  const known = new Set(afterKill.torn.values())
  const victim = afterKill.paths.get(shared[0] as string)
  const injectedTornTail = victim !== undefined && !afterKill.torn.has(victim)
  if (injectedTornTail) {
    const fragment = `{"type":"message","id":"0badc0de","parentId":null,"message":{"role":"user","content":"${TORN_MARKER}`
    appendFileSync(victim, fragment)
    known.add(fragment)
  }

  // 3. Restart: everything acknowledged is there; the API agrees with the files.
  let server = await startServer({ DATA_DIR: dataDir }, undefined, options.serverEntry)
  await verifyOverHttp(server.baseUrl, t, 'after restart')
  await compareWithFiles(server.baseUrl, t, afterKill.paths, known)

  // 4. Append to every session after the restart (a torn tail must not swallow these lines).
  const batch = { entries: [userMessage('after restart'), assistantMessage('ok')] }
  for (const id of t.acked.keys()) ack(t, id, await call(server.baseUrl, 'POST', `/v1/sessions/${id}/entries`, batch))
  await stopCleanly(server, t, 'first clean stop')

  // 5. Clean restart: the new lines survived, each fragment is a line of its own.
  server = await startServer({ DATA_DIR: dataDir }, undefined, options.serverEntry)
  await verifyOverHttp(server.baseUrl, t, 'after clean restart')
  const final = verifyFiles(dataDir, t, 'after clean restart', known)
  for (const [path, tail] of final.torn) {
    if (!known.has(tail)) t.problems.push(`after clean restart: ${path} ends in a new partial line`)
  }
  if (injectedTornTail && !readFileSync(victim, 'utf8').includes(`${TORN_MARKER}\n`)) {
    t.problems.push('after clean restart: the torn fragment did not end up on a line of its own')
  }
  await stopCleanly(server, t, 'final stop')
  return {
    seed: options.seed,
    acknowledged,
    sessions: t.acked.size,
    naturalTornTails: afterKill.torn.size,
    injectedTornTail,
    problems: t.problems,
    ms: Date.now() - started,
  }
}
