/**
 * `npm run bench:soak`: one tenant attacks a tokened server (spawned as `npm start` runs it, with
 * AUTH_TOKENS_FILE, under `ulimit -n` SOAK_NOFILE, default 1024) for SOAK_SECONDS (default 60)
 * with a mixed abusive load — unsaved sessions that keep growing, bodies dribbled a byte at a
 * time with and without a token, listings of sessions whose first message is megabytes, and
 * downloads of a large blob that are never read — while another tenant keeps appending and health
 * probes come from a third address. It reports the other tenant's append latency (target: p99
 * under 100 ms, no failure), the probes (target: every one answered 200 within 2 s), the server's
 * peak RSS against the bound its limits give (see `rssBound`), with the heap and external memory
 * behind it, and whether the process survived; then it rewrites its own section of
 * bench/RESULTS.md. The same attack runs first against the server as shipped, then (unless
 * SOAK_BASELINE=0) against the same server with V8's own heap growing factor
 * (`--heap-growing-percent=0`), the baseline. Traffic goes to 127/8 only: the attacker's from
 * `ATTACKER`, the appends from 127.0.0.1, the probes from `PROBER` (all on the loopback interface).
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { addToken } from '../src/auth/tokens.js'
import { loadConfig } from '../src/config.js'
import { HEAP_GROWING_PERCENT } from '../src/heap-growth.js'
import { connectionCaps } from '../src/http/descriptor-limit.js'
import { buildOnce, cpuSecondsOf, SERVER_UNDER_TEST, startOurServer } from './lib/processes.js'
import { dribble, PROBE_TIMEOUT_MS, probeWhile } from './lib/reachability.js'
import { MemorySampler, readHeap, type HeapReading } from './lib/server-memory.js'
import { fmt, int, mib, percentileSorted, sleep, table, verdict, writeSection } from './lib/stats.js'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60)
const P99_TARGET_MS = 100
const SLOW_SOCKETS = 200
/** Sockets that announce a 1e9-byte body without a token and send a byte of it every 5 s. */
const DRIBBLERS = 240
/** The server's file descriptor limit, soft and hard (Debian's usual soft limit by default). */
const NOFILE = Number(process.env.SOAK_NOFILE ?? 1024)
const ATTACKER = '127.0.0.66'
const PROBER = '127.0.0.2'
const HUGE_SESSIONS = 14
const HUGE_MESSAGE = 'm'.repeat(4 * 1024 * 1024)
const BLOB = Buffer.alloc(32 * 1024 * 1024, 3)
const HEADING = '## Soak: one abusive tenant (`npm run bench:soak`)'
/** The limits the server runs with: its defaults with tokens. */
const LIMITS = loadConfig({ AUTH_TOKENS_FILE: 'tokens.json' })
/** The connection caps the server runs with under NOFILE (src/http/descriptor-limit.ts). */
const CAPS = connectionCaps({ total: LIMITS.maxConnections, perClient: LIMITS.maxConnectionsPerClient }, NOFILE)
/** What the attacker's unsaved sessions may hold at most (MAX_UNSAVED_SESSIONS × MAX_UNSAVED_SESSION_BYTES). */
const UNSAVED_BOUND = LIMITS.maxUnsavedSessions * LIMITS.maxUnsavedSessionBytes
const GROWTH = 1 + HEAP_GROWING_PERCENT / 100

/**
 * The RSS the server may reach under this attack, from the limits: before the attack it holds
 * `before` (code, the saved sessions of the set-up, whatever garbage is not collected yet); the
 * attack can add only the unsaved sessions (`UNSAVED_BOUND`: listings keep cut copies of texts and
 * report loaded sessions in place, unread downloads hold their streams' buffers, not their
 * lengths, dribbled bodies what arrived of them); and V8 collects before the heap grows past
 * `GROWTH` times what is live (src/heap-growth.ts).
 */
const rssBound = (before: number): number => GROWTH * (before + UNSAVED_BOUND)

const user = (text: string) => ({ type: 'message', message: { role: 'user', content: text, timestamp: Date.now() } })
const assistant = (text: string) => ({
  type: 'message',
  message: { role: 'assistant', content: [{ type: 'text', text }], provider: 'p', model: 'm', usage: { input: 1, output: 1 }, stopReason: 'stop', timestamp: Date.now() },
})

interface Run {
  name: string
  latencies: Float64Array
  victimFailures: number
  probeLatencies: Float64Array
  probeFailures: number
  before: HeapReading
  peakRss: number
  atPeak: HeapReading | undefined
  max: HeapReading
  gcSeconds: number
  cpuSeconds: number
  survived: boolean
  counts: Map<string, number>
  load: string
}

const loadAverage = (): string => loadavg().map((l) => l.toFixed(1)).join(' / ')

async function attack (name: string, nodeArgs: string[]): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'ss-soak-'))
  const tokensFile = join(dir, 'tokens.json')
  const evil = (await addToken(tokensFile, { tenant: 'evil', scopes: ['write'] })).secret
  const good = (await addToken(tokensFile, { tenant: 'good', scopes: ['write'] })).secret
  const server = await startOurServer(join(dir, 'data'), { AUTH_TOKENS_FILE: tokensFile }, undefined, nodeArgs, NOFILE)
  const base = server.baseUrl
  const port = Number(new URL(base).port)
  const counts = new Map<string, number>()
  const count = (what: string): void => { counts.set(what, (counts.get(what) ?? 0) + 1) }
  const fromAttacker = { localAddress: ATTACKER }
  const attacker = new Agent({ connections: 64, connect: fromAttacker })
  const victim = new Agent({ connections: 1 })
  const call = async (secret: string, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, agent = attacker) => {
    const res = await request(`${base}${path}`, {
      method,
      dispatcher: agent,
      headers: { authorization: `Bearer ${secret}`, 'content-type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json' },
      ...(body === undefined ? {} : { body: Buffer.isBuffer(body) ? body : JSON.stringify(body) }),
    })
    await res.body.dump()
    return res.statusCode
  }

  // Set-up: the victim's session, the attacker's huge saved sessions and its large blob.
  await call(good, 'POST', '/v1/sessions', { cwd: '/good', id: 'work' })
  await call(good, 'POST', '/v1/sessions/work/entries', { entries: [user('start'), assistant('ok')] })
  for (let i = 0; i < HUGE_SESSIONS; i++) {
    await call(evil, 'POST', '/v1/sessions', { cwd: '/evil', id: `huge-${i}` })
    await call(evil, 'POST', `/v1/sessions/huge-${i}/entries`, { entries: [user(HUGE_MESSAGE), assistant('ok')] })
  }
  const hash = createHash('sha256').update(BLOB).digest('hex')
  await call(evil, 'PUT', `/v1/blobs/sha256/${hash}`, BLOB)

  const before = await readHeap(base, server.child)
  const load = loadAverage()
  const cpu0 = cpuSecondsOf(server.child.pid)
  const end = Date.now() + SECONDS * 1000
  const running = (): boolean => Date.now() < end && server.child.alive
  const sampler = new MemorySampler(base, server.child)

  // 1. Unsaved sessions that keep growing (256 KiB user messages, never an assistant reply).
  const unsaved = async (worker: number): Promise<void> => {
    for (let n = 0; running(); n++) {
      const id = `unsaved-${worker}-${n}`
      const created = await call(evil, 'POST', '/v1/sessions', { cwd: '/evil', id }).catch(() => 0)
      count(`unsaved create ${created}`)
      if (created !== 201) { await sleep(200); continue }
      for (let i = 0; i < 100 && running(); i++) {
        const status = await call(evil, 'POST', `/v1/sessions/${id}/entries`, user('u'.repeat(256 * 1024))).catch(() => 0)
        count(`unsaved append ${status}`)
        if (status !== 201) break
      }
    }
  }
  // 2. Bodies dribbled a byte every 500 ms, unauthenticated and authenticated; reopened when cut.
  const sockets = new Set<Socket>()
  const slow = (): void => {
    if (!running()) return
    const s = connect({ port, host: '127.0.0.1', localAddress: ATTACKER })
    sockets.add(s)
    s.on('error', () => {})
    s.resume()
    s.on('connect', () => { s.write(`POST /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${evil}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`) })
    const timer = setInterval(() => { if (s.writable) s.write(' ') }, 500)
    s.on('close', () => { clearInterval(timer); sockets.delete(s); count(running() ? 'slow socket closed by the server' : 'slow socket closed at the end'); setTimeout(slow, 100) })
  }
  for (let i = 0; i < SLOW_SOCKETS; i++) slow()
  // 3. Listings of every huge session.
  const listings = async (): Promise<void> => {
    while (running()) count(`listing ${await call(evil, 'GET', '/v1/sessions?limit=1000').catch(() => 0)}`)
  }
  // 4. Downloads of the 32 MiB blob that are never read, held 5 s, 8 at a time.
  const downloads = async (): Promise<void> => {
    while (running()) {
      const held = await Promise.all(Array.from({ length: 8 }, async () => {
        const agent = new Agent({ connect: fromAttacker })
        const res = await request(`${base}/v1/blobs/sha256/${hash}`, { dispatcher: agent, headers: { authorization: `Bearer ${evil}` } }).catch(() => undefined)
        count(`unread download ${res?.statusCode ?? 0}`)
        return { res, agent }
      }))
      await sleep(5000)
      for (const { res, agent } of held) {
        // Dropping an unread body is the point: its abort error is expected.
        res?.body.on('error', () => {}).destroy()
        void agent.destroy()
      }
    }
  }
  // The victim: one append after another, each timed.
  const latencies: number[] = []
  let victimFailures = 0
  const appends = async (): Promise<void> => {
    while (running()) {
      const start = performance.now()
      const status = await call(good, 'POST', '/v1/sessions/work/entries', { type: 'custom', customType: 'tick', data: { at: Date.now() } }, victim).catch(() => 0)
      latencies.push(performance.now() - start)
      if (status !== 201) victimFailures++
      await sleep(20)
    }
  }

  // 5. Bodies announced as 1e9 bytes without a token, a byte every 5 s, reopened when cut.
  const head = 'POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{'
  const dribblers = dribble(DRIBBLERS, { port, from: ATTACKER, head, everyMs: 5000, running, onCut: () => count('unauthenticated dribbler closed by the server') })
  // Health probes from another address, all along.
  const probes = probeWhile(port, PROBER, running)

  await Promise.all([unsaved(0), unsaved(1), listings(), listings(), downloads(), appends()])
  const { latencies: probeLatencies, failures: probeFailures } = await probes
  sampler.stop()
  const survived = server.child.alive
  const after = survived ? await readHeap(base, server.child).catch(() => undefined) : undefined
  const cpuSeconds = cpuSecondsOf(server.child.pid) - cpu0
  for (const s of [...sockets, ...dribblers]) s.destroy()
  await Promise.all([attacker.destroy(), victim.destroy()])
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
  return {
    name,
    latencies: Float64Array.from(latencies).sort(),
    victimFailures,
    probeLatencies: Float64Array.from(probeLatencies).sort(),
    probeFailures,
    before,
    peakRss: sampler.peakRss,
    atPeak: sampler.atPeak,
    max: sampler.max,
    gcSeconds: (after ?? sampler.max).gcSeconds - before.gcSeconds,
    cpuSeconds,
    survived,
    counts,
    load: `${load} → ${loadAverage()}`,
  }
}

/** The rows of one run: measured figures beside their targets. */
function rows (run: Run): string[][] {
  const p99 = percentileSorted(run.latencies, 99)
  const bound = rssBound(run.before.rss)
  const at = run.atPeak
  return [
    ['load average (1 / 5 / 15 min), start → end', run.load, '', ''],
    ['`good` appends', int(run.latencies.length), '', ''],
    ['`good` failed appends', int(run.victimFailures), '0', verdict(run.victimFailures === 0)],
    ['`good` append p50 (ms)', fmt(percentileSorted(run.latencies, 50)), '', ''],
    ['`good` append p99 (ms)', fmt(p99), `< ${P99_TARGET_MS}`, verdict(p99 < P99_TARGET_MS)],
    ['`good` append max (ms)', fmt(run.latencies[run.latencies.length - 1] ?? NaN), '', ''],
    [`health probes from ${PROBER}`, int(run.probeLatencies.length), '', ''],
    [`health probes not answered 200 within ${PROBE_TIMEOUT_MS} ms`, int(run.probeFailures), '0', verdict(run.probeFailures === 0)],
    ['health probe p99 / max (ms)', `${fmt(percentileSorted(run.probeLatencies, 99))} / ${fmt(run.probeLatencies[run.probeLatencies.length - 1] ?? NaN)}`, '', ''],
    ['server RSS before the attack (MiB)', mib(run.before.rss), '', ''],
    ['RSS bound from the limits (MiB, see above)', mib(bound), '', ''],
    ['server peak RSS (MiB, sampled every 250 ms)', mib(run.peakRss), '< the bound', verdict(run.peakRss < bound)],
    ['heap used / heap total / external at the highest RSS read with them (MiB)', at === undefined ? '—' : `${mib(at.heapUsed)} / ${mib(at.heapTotal)} / ${mib(at.external)}`, '', ''],
    ['highest heap total / external (MiB, sampled every second)', `${mib(run.max.heapTotal)} / ${mib(run.max.external)}`, '', ''],
    ['server CPU time during the attack (s; what the shared machine gave it)', fmt(run.cpuSeconds), '', ''],
    ['time spent collecting garbage during the attack (s)', fmt(run.gcSeconds, 2), '', ''],
    ['server process alive at the end', run.survived ? 'yes' : 'no', 'yes', verdict(run.survived)],
  ]
}

async function main (): Promise<void> {
  buildOnce()
  const shipped = await attack('as shipped', [])
  const baseline = process.env.SOAK_BASELINE === '0' ? undefined : await attack('baseline', ['--heap-growing-percent=0'])
  const runs = [shipped, ...(baseline === undefined ? [] : [baseline])]
  const section = [
    HEADING,
    '',
    `${new Date().toISOString().slice(0, 10)}, ${SECONDS} s per run, server ${SERVER_UNDER_TEST}, tokens on (every default limit in force),`,
    `under \`ulimit -n ${NOFILE}\`: ${CAPS.total} connections in all, ${CAPS.perClient} from one address.`,
    `Tenant \`evil\` (from ${ATTACKER}) ran 2 growing-unsaved-session loops (256 KiB user messages), ${SLOW_SOCKETS} dribbled bodies`,
    `with its token (a byte every 500 ms), ${DRIBBLERS} without a token (announced as 1e9 bytes, a byte every 5 s; both reopened when cut),`,
    `2 loops listing ${HUGE_SESSIONS} sessions with 4 MiB first messages, and 8 unread 32 MiB blob downloads at a time;`,
    `tenant \`good\` (from 127.0.0.1) appended one entry after another (20 ms apart), and \`GET /healthz\` was probed from ${PROBER} every 250 ms.`,
    '',
    `The RSS bound is ${GROWTH} × (RSS before the attack + ${mib(UNSAVED_BOUND)} MiB): what the server held before, plus what the`,
    `attacker can make it hold (its unsaved sessions: MAX_UNSAVED_SESSIONS ${LIMITS.maxUnsavedSessions} × MAX_UNSAVED_SESSION_BYTES`,
    `${LIMITS.maxUnsavedSessionBytes}), times the factor the heap may grow past its live data before V8 collects (src/heap-growth.ts).`,
    baseline === undefined
      ? ''
      : 'The baseline is the same server with V8\'s own heap growing factor (`node --heap-growing-percent=0`), run right after; its bound is given for comparison only, since without the fixed factor nothing enforces it.',
    '',
    table(['measure', ...runs.map((r) => r.name), 'target', ...runs.map((r) => `met (${r.name})`)],
      rows(shipped).map((row, i) => {
        const other = baseline === undefined ? undefined : rows(baseline)[i]
        return [row[0] as string, row[1] as string, ...(other === undefined ? [] : [other[1] as string]), row[2] as string, row[3] as string, ...(other === undefined ? [] : [other[3] as string])]
      })),
    '',
    'What the attacker got:',
    '',
    table(['answer', ...runs.map((r) => r.name)], [...new Set(runs.flatMap((r) => [...r.counts.keys()]))].sort()
      .map((k) => [k, ...runs.map((r) => int(r.counts.get(k) ?? 0))])),
    '',
  ].join('\n')
  process.stdout.write(section + '\n')
  if (process.env.SOAK_WRITE !== '0') writeSection(join(import.meta.dirname, 'RESULTS.md'), HEADING, section)
}

await main()
