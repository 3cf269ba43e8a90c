/**
 * Reads a V8 CPU profile (`node --cpu-prof`) and sorts the main thread's samples of a time window
 * into what they were doing, by the frames on their stack: the first kind in `KINDS` that matches
 * a sample's stack takes its time. Samples carry the monotonic clock (µs) that
 * `process.hrtime.bigint()` reads in any process of the machine, so a window taken around a load
 * in this process selects that load's samples in the server's profile.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

interface Frame { functionName: string, url: string }
interface ProfileNode { id: number, callFrame: Frame, children?: number[] }
interface Profile { nodes: ProfileNode[], startTime: number, samples: number[], timeDeltas: number[] }

/** What a sample was doing, and how its stack shows it. */
const KINDS: ReadonlyArray<{ kind: string, leaf?: (f: Frame) => boolean, any?: (f: Frame) => boolean }> = [
  { kind: 'garbage collection', leaf: (f) => f.functionName === '(garbage collector)' },
  { kind: 'V8 and native code not attributed to a function', leaf: (f) => f.functionName === '(program)' },
  { kind: 'logging (pino and the request log)', any: (f) => /\/(pino|pino-std-serializers|sonic-boom|thread-stream)\//.test(f.url) || /\/src\/http\/(request-log|log-destination)/.test(f.url) },
  { kind: 'socket writes of the answers', any: (f) => f.url === 'node:internal/stream_base_commons' },
  { kind: 'file calls (writes and fdatasync handed to the thread pool)', any: (f) => f.url === 'node:fs' || f.url.startsWith('node:internal/fs/') },
  { kind: 'JSON.parse and JSON.stringify', leaf: (f) => f.url === '' && (f.functionName === 'parse' || f.functionName === 'stringify') },
  { kind: 'schema checks and serializers (TypeBox, Ajv, fast-json-stringify)', any: (f) => /\/node_modules\/(@sinclair\/typebox|ajv|fast-json-stringify|fast-uri)\//.test(f.url) },
  { kind: 'storage code (journal, index, search feed)', any: (f) => /\/src\/storage\//.test(f.url) },
  { kind: 'registry code (appends, sessions, subscribers)', any: (f) => /\/src\/(registry|session|sse)\//.test(f.url) },
  { kind: 'other server code', any: (f) => /\/(src|routes)\/|\/bench\/lib\//.test(f.url) },
  { kind: 'Fastify and its plugins', any: (f) => /\/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|fastq|toad-cache)\//.test(f.url) },
  { kind: 'Node (HTTP parsing, streams, timers)', any: (f) => f.url.startsWith('node:') },
]
export const KIND_NAMES: readonly string[] = [...KINDS.map((k) => k.kind), 'other']

export interface WindowProfile {
  /** Busy time of the main thread in the window (idle left out), µs. */
  busyUs: number
  /** Busy µs by kind (`KIND_NAMES`). */
  byKind: Map<string, number>
}

/**
 * The main thread's `.cpuprofile` of the one process that wrote into `dir` (each worker thread
 * writes its own: `CPU.<date>.<time>.<pid>.<thread id>.<n>.cpuprofile`, the main thread's id 0).
 */
export function readProfile (dir: string): Profile {
  const files = readdirSync(dir).filter((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f))
  if (files.length !== 1) throw new Error(`expected one main-thread .cpuprofile in ${dir}, found ${files.length}: ${readdirSync(dir).join(', ')}`)
  return JSON.parse(readFileSync(join(dir, files[0] as string), 'utf8')) as Profile
}

/** The samples of `profile` between `fromUs` and `toUs` (monotonic µs), sorted by kind. */
export function profileWindow (profile: Profile, fromUs: number, toUs: number): WindowProfile {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const kindOf = new Map<number, string | undefined>()
  const classify = (id: number): string | undefined => {
    if (kindOf.has(id)) return kindOf.get(id)
    const leaf = (byId.get(id) as ProfileNode).callFrame
    let kind: string | undefined
    if (leaf.functionName === '(idle)') kind = undefined
    else {
      const stack: Frame[] = []
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push((byId.get(at) as ProfileNode).callFrame)
      kind = KINDS.find((k) => (k.leaf?.(leaf) ?? false) || (k.any !== undefined && stack.some(k.any)))?.kind ?? 'other'
    }
    kindOf.set(id, kind)
    return kind
  }
  const byKind = new Map<string, number>(KIND_NAMES.map((k) => [k, 0]))
  let busyUs = 0
  let t = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0
    t += delta
    // A sample stands for the time since the one before it.
    if (t < fromUs || t > toUs) continue
    const kind = classify(profile.samples[i] as number)
    if (kind === undefined) continue
    busyUs += delta
    byKind.set(kind, (byKind.get(kind) ?? 0) + delta)
  }
  return { busyUs, byKind }
}

/** Now on the monotonic clock the profiles use, µs. */
export function monotonicUs (): number {
  return Number(process.hrtime.bigint() / 1000n)
}
