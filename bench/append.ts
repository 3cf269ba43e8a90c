/**
 * Durable append throughput. The servers run side by side, each in its own process, and
 * autocannon runs in another:
 * - the baseline: a bare Fastify POST of a ~1 KB body validated by a TypeBox schema, no I/O
 *   (`lib/bare-fastify.ts`, the first baseline);
 * - session-store as shipped (`npm start`, default settings);
 * - the floor: `lib/durable-floor.ts`, a bare `node:http` server that does only the write and
 *   fdatasync SPEC.md §8.4 asks of each append, with group commit: the baseline the targets name;
 * - the peer: `DurableStreamTestServer` of @durable-streams/server, the project's reference
 *   server, with its file-backed store, JSON mode; a second instance takes the batched load.
 * Every load posts the same 1 KB `message` entry, alone or 10 to a request. Loads are interleaved
 * round by round, so noise on this shared machine hits all of them alike; figures are medians
 * over the rounds.
 * Run alone: npx tsx bench/append.ts
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkClean, runCannon, type CannonConfig, type CannonSummary } from './lib/cannon.js'
import { bareBody } from './lib/bare-fastify.js'
import { createDurableSession, json, messageBody } from './lib/http.js'
import { cpuSecondsOf, ROOT, startOurServer, startScriptServer, type ServerHandle } from './lib/processes.js'
import { fmt, int, median, table, verdict } from './lib/stats.js'
import { countSyscalls, type SyscallCounts } from './lib/strace.js'
import { runFsAppends, type FsAppendSummary } from './lib/fs-append.js'
import { linesOnDisk } from './lib/lines-on-disk.js'

const CONNECTIONS = 100
const BODY = messageBody(1024)
/** Entries per request of the batched loads. */
const BATCH = 10
const OURS_BATCH_BODY = JSON.stringify({ entries: Array.from({ length: BATCH }, () => JSON.parse(BODY) as unknown) })
const PEER_BATCH_BODY = JSON.stringify(Array.from({ length: BATCH }, () => JSON.parse(BODY) as unknown))
const JSON_HEADERS = { 'content-type': 'application/json' }

export interface AppendOptions { rounds: number, durationS: number, warmupS: number }

type Target = 'bare' | 'floor1' | 'ours1' | 'peer1' | 'floor100' | 'dsync100' | 'ours100' | 'peer100' | 'oursBatch' | 'peerBatch'
const TARGETS: Target[] = ['bare', 'floor1', 'ours1', 'peer1', 'floor100', 'dsync100', 'ours100', 'peer100', 'oursBatch', 'peerBatch']
const LABELS: Record<Target, string> = {
  bare: 'bare Fastify + TypeBox POST, ~1 KB body, no I/O (baseline)',
  floor1: 'minimal durable `node:http` server, 1 file × 100 connections',
  floor100: 'minimal durable `node:http` server, 100 files × 1 connection',
  dsync100: 'minimal durable `node:http` server, `O_DSYNC` writes, 100 files × 1 connection',
  ours1: 'session-store, 1 session × 100 connections',
  peer1: 'Durable Streams, 1 stream × 100 connections',
  ours100: 'session-store, 100 sessions × 1 connection',
  peer100: 'Durable Streams, 100 streams × 1 connection',
  oursBatch: `session-store, 1 session × 100 connections, ${BATCH} entries per request`,
  peerBatch: `Durable Streams, 1 stream × 100 connections, ${BATCH} messages per request (JSON array)`,
}
/** Entries (messages) per request of each load. */
const PER_REQUEST: Record<Target, number> = { bare: 1, floor1: 1, floor100: 1, dsync100: 1, ours1: 1, peer1: 1, ours100: 1, peer100: 1, oursBatch: BATCH, peerBatch: BATCH }
const emptyRecord = <T>(): Record<Target, T[]> => Object.fromEntries(TARGETS.map((t) => [t, []])) as unknown as Record<Target, T[]>

interface Fixture {
  bare: ServerHandle
  floor: ServerHandle
  /** The floor with `O_DSYNC` writes (`--dsync`). */
  dsync: ServerHandle
  ours: ServerHandle
  peer: ServerHandle
  /** A second peer instance for the batched load (its own store, one stream). */
  peerB: ServerHandle
  oursOne: string
  oursBatch: string
  peerBatch: string
  oursMany: string[]
  peerOne: string
  peerMany: string[]
}

async function createPeerStream (baseUrl: string, path: string): Promise<string> {
  const res = await fetch(`${baseUrl}${path}`, { method: 'PUT', headers: JSON_HEADERS })
  await res.arrayBuffer()
  if (res.status !== 201 && res.status !== 200) throw new Error(`peer PUT ${path}: ${res.status}`)
  return path
}

async function setUp (oursDir: string, peerDir: string, peerBatchDir: string): Promise<Fixture> {
  const poolSized = ['--require', join(ROOT, 'scripts', 'start.cjs')]
  const [bare, floor, dsync, ours, peer, peerB] = await Promise.all([
    startScriptServer('bench/lib/bare-fastify.ts'),
    startScriptServer('bench/lib/durable-floor.ts', [tmpdir()], {}, poolSized),
    startScriptServer('bench/lib/durable-floor.ts', [tmpdir(), '--dsync'], {}, poolSized),
    startOurServer(oursDir),
    startScriptServer('bench/lib/peer-server.ts', [peerDir]),
    startScriptServer('bench/lib/peer-server.ts', [peerBatchDir]),
  ])
  // The single-session load uses the first of the 100: the peer keeps at most 100 segment files
  // open (FileHandlePool, maxFileHandles 100), and a 101st stream makes it evict a handle between
  // a write and its fsync, which it then answers 404.
  const oursMany: string[] = []
  for (let i = 0; i < CONNECTIONS; i++) oursMany.push(await createDurableSession(ours.baseUrl, `/bench/append/${i % 10}`))
  const peerMany: string[] = []
  for (let i = 0; i < CONNECTIONS; i++) peerMany.push(await createPeerStream(peer.baseUrl, `/v1/stream/bench-${i}`))
  const oursBatch = await createDurableSession(ours.baseUrl, '/bench/append/batch')
  const peerBatch = await createPeerStream(peerB.baseUrl, '/v1/stream/bench-batch')
  return { bare, floor, dsync, ours, peer, peerB, oursOne: oursMany[0] as string, oursBatch, peerBatch, oursMany, peerOne: peerMany[0] as string, peerMany }
}

function load (f: Fixture, target: Target, durationS: number): CannonConfig {
  const base = { connections: CONNECTIONS, durationS, method: 'POST' as const, headers: JSON_HEADERS, body: BODY }
  const entries = (id: string): string => `/v1/sessions/${id}/entries`
  switch (target) {
    case 'bare': return { ...base, body: bareBody(1024), url: `${f.bare.baseUrl}/entries` }
    case 'floor1': return { ...base, url: `${f.floor.baseUrl}/files/0`, bodyIncludes: '"persisted":true' }
    case 'floor100': return { ...base, url: `${f.floor.baseUrl}/files/0`, paths: f.oursMany.map((_, i) => `/files/${i + 1}`), bodyIncludes: '"persisted":true' }
    case 'dsync100': return { ...base, url: `${f.dsync.baseUrl}/files/0`, paths: f.oursMany.map((_, i) => `/files/${i + 1}`), bodyIncludes: '"persisted":true' }
    case 'ours1': return { ...base, url: `${f.ours.baseUrl}${entries(f.oursOne)}`, bodyIncludes: '"persisted":true' }
    case 'ours100': return { ...base, url: `${f.ours.baseUrl}${entries(f.oursOne)}`, paths: f.oursMany.map(entries), bodyIncludes: '"persisted":true' }
    case 'peer1': return { ...base, url: `${f.peer.baseUrl}${f.peerOne}` }
    case 'peer100': return { ...base, url: `${f.peer.baseUrl}${f.peerOne}`, paths: f.peerMany }
    case 'oursBatch': return { ...base, body: OURS_BATCH_BODY, url: `${f.ours.baseUrl}${entries(f.oursBatch)}`, bodyIncludes: '"persisted":true' }
    case 'peerBatch': return { ...base, body: PEER_BATCH_BODY, url: `${f.peerB.baseUrl}${f.peerBatch}` }
  }
}

function serverOf (f: Fixture, t: Target): ServerHandle {
  return t === 'bare' ? f.bare : t === 'dsync100' ? f.dsync : t.startsWith('floor') ? f.floor : t.startsWith('ours') ? f.ours : t === 'peerBatch' ? f.peerB : f.peer
}

/** Entries of our sessions and appends of the peer's streams, read back after the loads. */
async function countStored (f: Fixture): Promise<{ ours: number, peer: number }> {
  let ours = 0
  for (const id of [...f.oursMany, f.oursBatch]) {
    ours += (await json<{ entryCount: number }>(`${f.ours.baseUrl}/v1/sessions/${id}`)).entryCount - 1 // minus the assistant message
  }
  const frame = 4 + (JSON.stringify(JSON.parse(BODY)).length + 1) + 1 // length prefix, JSON + ',', newline
  let peer = 0
  for (const path of f.peerMany) {
    const res = await fetch(`${f.peer.baseUrl}${path}`, { method: 'HEAD' })
    const offset = res.headers.get('stream-next-offset') ?? '0_0'
    peer += Number(offset.split('_')[1]) / frame
  }
  // One frame per request: a 4-byte length, a flag byte, then each message's JSON and ','.
  const batchFrame = 5 + BATCH * (JSON.stringify(JSON.parse(BODY)).length + 1)
  const res = await fetch(`${f.peerB.baseUrl}${f.peerBatch}`, { method: 'HEAD' })
  peer += Number((res.headers.get('stream-next-offset') ?? '0_0').split('_')[1]) / batchFrame * BATCH
  return { ours, peer }
}

export interface AppendResults {
  runs: Record<Target, CannonSummary[]>
  /** Plain `fs` write + fdatasync on 100 files, one per round, run after that round's loads. */
  fsAppends: FsAppendSummary[]
  /** Server CPU during each load, in cores (CPU seconds per second, all threads). */
  cores: Record<Target, number[]>
  /** Per round: ours / bare (requests/s), ours / peer (entries/s). */
  ratios: { oursVsBare1: number[], oursVsBare100: number[], floorVsBare1: number[], floorVsBare100: number[], dsyncVsBare100: number[], oursVsFloor1: number[], oursVsFloor100: number[], ours100VsFs: number[], oursVsPeer1: number[], oursVsPeer100: number[], oursBatchVsPeerBatch: number[], oursVsPeerBatch: number[] }
  stored: { ours: number, peer: number, acknowledgedOurs: number, acknowledgedPeer: number, oursLinesOnDisk: number }
  syscalls: { ours?: SyscallCounts, peer?: SyscallCounts, oursAppends: number, peerAppends: number }
}

/** Runs the interleaved rounds; every run must be clean (all 2xx, all `persisted: true`). */
export async function measureAppends (options: AppendOptions): Promise<AppendResults> {
  const oursDir = mkdtempSync(join(tmpdir(), 'bench-append-ours-'))
  const peerDir = mkdtempSync(join(tmpdir(), 'bench-append-peer-'))
  const peerBatchDir = mkdtempSync(join(tmpdir(), 'bench-append-peer-batch-'))
  const f = await setUp(oursDir, peerDir, peerBatchDir)
  const targets = TARGETS
  const runs = emptyRecord<CannonSummary>()
  const cores = emptyRecord<number>()
  const fsAppends: FsAppendSummary[] = []
  let acknowledgedOurs = 0
  let acknowledgedPeer = 0
  const count = (t: Target, s: CannonSummary): void => {
    if (t.startsWith('ours')) acknowledgedOurs += s.ok * PER_REQUEST[t]
    if (t.startsWith('peer')) acknowledgedPeer += s.ok * PER_REQUEST[t]
  }
  try {
    for (const t of targets) {
      const s = await runCannon(load(f, t, options.warmupS))
      checkClean(t, s)
      count(t, s)
    }
    for (let round = 0; round < options.rounds; round++) {
      for (const t of targets) {
        const pid = serverOf(f, t).child.pid
        const cpu0 = cpuSecondsOf(pid)
        const s = await runCannon(load(f, t, options.durationS))
        checkClean(t, s)
        count(t, s)
        cores[t].push((cpuSecondsOf(pid) - cpu0) / s.durationS)
        runs[t].push(s)
        process.stderr.write(`append round ${round + 1} ${t}: ${int(s.rps)} req/s p99 ${s.p99} ms\n`)
      }
      const fsRun = await runFsAppends(CONNECTIONS, 1024, options.durationS)
      fsAppends.push(fsRun)
      process.stderr.write(`append round ${round + 1} plain fs: ${int(fsRun.perS)} appends/s p99 ${fmt(fsRun.p99, 0)} ms\n`)
    }
    // fsync evidence: syscalls during a short extra load on one session / stream each.
    let oursAppends = 0
    let peerAppends = 0
    const ours = await countSyscalls(f.ours.child.pid, ['fdatasync', 'fsync', 'msync', 'sync_file_range'], async () => {
      const s = await runCannon(load(f, 'ours1', 2))
      checkClean('ours1', s)
      count('ours1', s)
      oursAppends = s.ok
    })
    const peer = await countSyscalls(f.peer.child.pid, ['fdatasync', 'fsync', 'msync', 'sync_file_range'], async () => {
      const s = await runCannon(load(f, 'peer1', 2))
      checkClean('peer1', s)
      count('peer1', s)
      peerAppends = s.ok
    })
    const stored = await countStored(f)
    await f.ours.stop() // flushes and closes every session file before the lines are counted
    const files = readdirSync(join(oursDir, 'sessions'), { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('.jsonl'))
    const oursLinesOnDisk = linesOnDisk(join(oursDir, 'sessions'), files) - 2 * (CONNECTIONS + 1) // headers, assistant messages
    // Entries per second of `a` over those of `b`, round by round.
    const per = (a: Target, b: Target): number[] =>
      runs[a].map((s, i) => s.rps * PER_REQUEST[a] / ((runs[b][i] as CannonSummary).rps * PER_REQUEST[b]))
    return {
      runs,
      fsAppends,
      cores,
      ratios: {
        oursVsBare1: per('ours1', 'bare'),
        oursVsBare100: per('ours100', 'bare'),
        ours100VsFs: runs.ours100.map((s, i) => s.rps / (fsAppends[i] as FsAppendSummary).perS),
        floorVsBare1: per('floor1', 'bare'),
        floorVsBare100: per('floor100', 'bare'),
        dsyncVsBare100: per('dsync100', 'bare'),
        oursVsFloor1: per('ours1', 'floor1'),
        oursVsFloor100: per('ours100', 'floor100'),
        oursVsPeer1: per('ours1', 'peer1'),
        oursVsPeer100: per('ours100', 'peer100'),
        oursBatchVsPeerBatch: per('oursBatch', 'peerBatch'),
        oursVsPeerBatch: per('ours1', 'peerBatch'),
      },
      stored: { ...stored, acknowledgedOurs, acknowledgedPeer, oursLinesOnDisk },
      syscalls: { ours, peer, oursAppends, peerAppends },
    }
  } finally {
    await Promise.all([f.bare.stop(), f.floor.stop(), f.dsync.stop(), f.ours.stop(), f.peer.stop(), f.peerB.stop()])
    for (const dir of [oursDir, peerDir, peerBatchDir]) rmSync(dir, { recursive: true, force: true })
  }
}

function syncs (c: SyscallCounts | undefined): number | undefined {
  if (c === undefined) return undefined
  return (c.fdatasync ?? 0) + (c.fsync ?? 0) + (c.msync ?? 0) + (c.sync_file_range ?? 0)
}

function describeSyncs (c: SyscallCounts | undefined, appends: number): string {
  const n = syncs(c)
  if (n === undefined) return 'strace unavailable'
  const parts = Object.entries(c ?? {}).filter(([k]) => k !== 'total').map(([k, v]) => `${int(v)} ${k}`).join(', ')
  return `${int(appends)} appends → ${parts} (${fmt(appends / Math.max(1, n), 1)} appends per sync)`
}

/** The RESULTS.md section. */
export function appendSection (r: AppendResults, options: AppendOptions): string {
  const rows = TARGETS.map((t) => {
    const s = r.runs[t]
    return [LABELS[t], int(median(s.map((x) => x.rps))), int(median(s.map((x) => x.rps * PER_REQUEST[t]))), fmt(median(s.map((x) => x.p50)), 0),
      fmt(median(s.map((x) => x.p99)), 0), fmt(median(r.cores[t]), 2), fmt(median(s.map((x) => x.clientCores)), 2), s.map((x) => int(x.rps)).join(' / ')]
  })
  const fsRuns = r.fsAppends
  const pool = fsRuns[0]?.threadPool ?? '—'
  rows.push([`plain Node \`fs\`, no HTTP: ${CONNECTIONS} files × 1 in flight, \`write\` + \`fdatasync\` of a 1,024-byte line (thread pool ${pool})`,
    int(median(fsRuns.map((x) => x.perS))), int(median(fsRuns.map((x) => x.perS))), fmt(median(fsRuns.map((x) => x.p50)), 0),
    fmt(median(fsRuns.map((x) => x.p99)), 0), fmt(median(fsRuns.map((x) => x.cores)), 2), '—', fsRuns.map((x) => int(x.perS)).join(' / ')])
  const ratioRow = (name: string, values: number[], target: number | undefined): string[] =>
    [name, `×${fmt(median(values), 2)}`, values.map((v) => fmt(v, 2)).join(' / '), target === undefined ? '—' : `≥ ×${fmt(target, 2)}`,
      target === undefined ? 'informational' : verdict(median(values) >= target)]
  return [
    '## Durable append throughput',
    '',
    `One 1,024-byte \`message\` entry (\`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"xxx…"}]}}\`), ${CONNECTIONS} connections,`,
    `alone or ${BATCH} to a request (session-store: \`{"entries": [...]}\`; Durable Streams: a JSON array, which its JSON mode stores as`,
    `${BATCH} messages). ${options.durationS} s per load, ${options.rounds} rounds with the ${TARGETS.length} loads interleaved in each round (after a ${options.warmupS} s warm-up of each),`,
    'medians over the rounds. autocannon runs in its own process; each server runs in its own process; all on 127.0.0.1.',
    'The baseline is a bare Fastify POST of a ~1 KB body (`{id, parentId, type, ts, data: {role, text, tags}}`) validated by a',
    'TypeBox schema, answering `{ok, id}`, with no I/O and no logger, at the same 100 connections.',
    'session-store is the server as shipped (see the top of this file: default settings, `info` logging). Every session-store',
    'response was checked to contain `"persisted":true` and every run had zero non-2xx, errors and timeouts. "Server CPU"',
    'is the server process\'s CPU time (all threads) per second of load; "client CPU" is autocannon\'s process, the same way.',
    '',
    'The peer is `DurableStreamTestServer` from `@durable-streams/server` (the version in package-lock.json), the reference',
    'server of the Durable Streams protocol, run with its file-backed store (`dataDir` set) and compression off. It is not',
    'tuned for throughput; it is the only off-the-shelf durable HTTP append log at hand. The single-stream load uses the',
    'first of its 100 streams (it keeps at most 100 segment files open); the batched load runs on a second instance.',
    '',
    'The minimal durable server (`bench/lib/durable-floor.ts`) is `node:http` with no framework, schema or logger: per',
    'request it parses the JSON body, appends it as one line to its file (`O_APPEND`) and answers 201 `{"persisted":true}` once',
    '`fdatasync` of that file completed after the write; lines that arrive while a file\'s write and sync are in flight join its',
    'next write, with one sync for all (group commit). That is what SPEC.md §8.4 asks of every append and nothing more: no',
    'ids, no tree, no index, no log line. It runs the same two loads as session-store (one file at 100 connections; 100 files',
    'with one connection each), its thread pool sized as `npm start` sizes the server\'s. Its ratio to the baseline is what a',
    'Node server that keeps §8.4 reaches on this machine before doing any work of its own, and session-store\'s targets are',
    'set against it (×0.70 of it at 1 session × 100 connections, ×0.80 at 100 sessions × 1 connection). A second instance opens its files',
    '`O_DSYNC` and makes no `fdatasync` call: each write returns once its data is durable, so an append of the 100-file load',
    'hands work to the thread pool once instead of twice.',
    '',
    `The plain \`fs\` row is one Node process without HTTP, run in each round after that round's loads for the same ${options.durationS} s:`,
    `${CONNECTIONS} files in a fresh directory under the system temp dir (where the servers' data dirs are), one append in flight on`,
    'each; an append is `fs.write` of one 1,024-byte line (`O_APPEND`) and then `fs.fdatasync` of that file, with callbacks; its',
    `thread pool is sized by \`scripts/start.cjs\`, as \`npm start\` sizes the server's (UV_THREADPOOL_SIZE=${pool}). Its p50/p99 are`,
    'per append (write start to fdatasync end) and its "server CPU" is that process\'s. It is the write-then-fdatasync-per-file work',
    'that SPEC.md §8.4 asks of each append of the 100-session load, without anything else; the ratio row sets that load beside it.',
    '',
    table(['load', 'req/s (median)', 'entries/s (median)', 'p50 ms', 'p99 ms', 'server CPU (cores)', 'client CPU (cores)', 'req/s per round'], rows),
    '',
    table(['ratio', 'median', 'per round', 'target', 'verdict'], [
      ratioRow('session-store 1 session × 100 conn. ÷ minimal durable server 1 file (req/s)', r.ratios.oursVsFloor1, 0.7),
      ratioRow('session-store 100 sessions × 1 conn. ÷ minimal durable server 100 files (req/s)', r.ratios.oursVsFloor100, 0.8),
      ratioRow('session-store 1 session × 100 conn. ÷ bare Fastify (req/s)', r.ratios.oursVsBare1, undefined),
      ratioRow('session-store 100 sessions × 1 conn. ÷ bare Fastify (req/s)', r.ratios.oursVsBare100, undefined),
      ratioRow(`session-store 100 sessions × 1 conn. (req/s) ÷ plain \`fs\` write + fdatasync on ${CONNECTIONS} files (appends/s)`, r.ratios.ours100VsFs, undefined),
      ratioRow('minimal durable server 1 file × 100 conn. ÷ bare Fastify (req/s)', r.ratios.floorVsBare1, undefined),
      ratioRow('minimal durable server 100 files × 1 conn. ÷ bare Fastify (req/s)', r.ratios.floorVsBare100, undefined),
      ratioRow('minimal durable server, `O_DSYNC` writes, 100 files × 1 conn. ÷ bare Fastify (req/s)', r.ratios.dsyncVsBare100, undefined),
      ratioRow('session-store ÷ Durable Streams, 1 entry per request, 1 session/stream (entries/s)', r.ratios.oursVsPeer1, undefined),
      ratioRow('session-store ÷ Durable Streams, 1 entry per request, 100 sessions/streams (entries/s)', r.ratios.oursVsPeer100, undefined),
      ratioRow(`session-store ÷ Durable Streams, both ${BATCH} per request (entries/s)`, r.ratios.oursBatchVsPeerBatch, undefined),
      ratioRow(`session-store 1 per request ÷ Durable Streams ${BATCH} per request (entries/s)`, r.ratios.oursVsPeerBatch, undefined),
    ]),
    '',
    `Read back after the loads: session-store acknowledged ${int(r.stored.acknowledgedOurs)} entries, its sessions hold ${int(r.stored.ours)} entries`,
    `and their files ${int(r.stored.oursLinesOnDisk)} entry lines; Durable Streams acknowledged ${int(r.stored.acknowledgedPeer)} messages and its streams hold ${int(r.stored.peer)}`,
    '(more stored than acknowledged: requests still in flight when each load stopped).',
    '',
    '**Both are durable.** session-store answers an append only after its line was written and `fdatasync`ed (the write',
    'queue coalesces the lines of concurrent appends into one write and one `fdatasync`, SPEC.md §8.4). The Durable Streams',
    'file-backed store serializes appends per stream, and for each request writes one frame to the stream\'s segment file,',
    'awaits `fdatasync` on it and then commits the new offset to LMDB before answering. Syscalls counted with `strace -f -c`',
    'during an extra 2 s load on one session / stream, one entry per request:',
    '',
    `- session-store: ${describeSyncs(r.syscalls.ours, r.syscalls.oursAppends)}`,
    `- Durable Streams: ${describeSyncs(r.syscalls.peer, r.syscalls.peerAppends)}`,
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = { rounds: 3, durationS: 5, warmupS: 2 }
  console.log(appendSection(await measureAppends(options), options))
}
