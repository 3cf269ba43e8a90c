/**
 * `npm run bench:soak`: one tenant attacks a tokened server (spawned as `npm start` runs it, with
 * AUTH_TOKENS_FILE) for SOAK_SECONDS (default 60) with a mixed abusive load — unsaved sessions
 * that keep growing, bodies dribbled a byte at a time, listings of sessions whose first message
 * is megabytes, and downloads of a large blob that are never read — while another tenant keeps
 * appending. It reports the other tenant's append latency (target: p99 under 100 ms, no failure),
 * the server's RSS (target: under RSS_BOUND_MIB), and whether the process survived, then
 * rewrites its own section of bench/RESULTS.md. Traffic goes to 127.0.0.1 only.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { addToken } from '../src/auth/tokens.js'
import { buildOnce, SERVER_UNDER_TEST, startOurServer } from './lib/processes.js'
import { fmt, int, mib, percentileSorted, sleep, table, verdict } from './lib/stats.js'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60)
const RSS_BOUND_MIB = 1024
const P99_TARGET_MS = 100
const SLOW_SOCKETS = 200
const HUGE_SESSIONS = 14
const HUGE_MESSAGE = 'm'.repeat(4 * 1024 * 1024)
const BLOB = Buffer.alloc(32 * 1024 * 1024, 3)
const HEADING = '## Soak: one abusive tenant (`npm run bench:soak`)'

const user = (text: string) => ({ type: 'message', message: { role: 'user', content: text, timestamp: Date.now() } })
const assistant = (text: string) => ({
  type: 'message',
  message: { role: 'assistant', content: [{ type: 'text', text }], provider: 'p', model: 'm', usage: { input: 1, output: 1 }, stopReason: 'stop', timestamp: Date.now() },
})

async function main (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ss-soak-'))
  const tokensFile = join(dir, 'tokens.json')
  const evil = (await addToken(tokensFile, { tenant: 'evil', scopes: ['write'] })).secret
  const good = (await addToken(tokensFile, { tenant: 'good', scopes: ['write'] })).secret
  buildOnce()
  const note = SERVER_UNDER_TEST
  const server = await startOurServer(join(dir, 'data'), { AUTH_TOKENS_FILE: tokensFile })
  const base = server.baseUrl
  const counts = new Map<string, number>()
  const count = (what: string): void => { counts.set(what, (counts.get(what) ?? 0) + 1) }
  const attacker = new Agent({ connections: 64 })
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

  const end = Date.now() + SECONDS * 1000
  const running = (): boolean => Date.now() < end && server.child.alive
  let peakRss = 0
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, server.child.memory().rss) }, 250)

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
    const s = connect({ port: Number(new URL(base).port), host: '127.0.0.1' })
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
        const agent = new Agent()
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

  await Promise.all([unsaved(0), unsaved(1), listings(), listings(), downloads(), appends()])
  clearInterval(sampler)
  const survived = server.child.alive
  for (const s of sockets) s.destroy()
  await Promise.all([attacker.destroy(), victim.destroy()])
  await server.stop()
  rmSync(dir, { recursive: true, force: true })

  const sorted = Float64Array.from(latencies).sort()
  const p50 = percentileSorted(sorted, 50)
  const p99 = percentileSorted(sorted, 99)
  const max = sorted[sorted.length - 1] ?? 0
  const section = [
    HEADING,
    '',
    `${new Date().toISOString().slice(0, 10)}, ${SECONDS} s, server ${note}, tokens on (every default limit in force).`,
    `Tenant \`evil\` ran 2 growing-unsaved-session loops (256 KiB user messages), ${SLOW_SOCKETS} dribbled bodies,`,
    `2 loops listing ${HUGE_SESSIONS} sessions with 4 MiB first messages, and 8 unread 32 MiB blob downloads at a time;`,
    'tenant `good` appended one entry after another (20 ms apart).',
    '',
    table(['measure', 'value', 'target', 'met'], [
      ['`good` appends', int(latencies.length), '', ''],
      ['`good` failed appends', int(victimFailures), '0', verdict(victimFailures === 0)],
      ['`good` append p50 (ms)', fmt(p50), '', ''],
      ['`good` append p99 (ms)', fmt(p99), `< ${P99_TARGET_MS}`, verdict(p99 < P99_TARGET_MS)],
      ['`good` append max (ms)', fmt(max), '', ''],
      ['server peak RSS in MiB (sampled every 250 ms)', mib(peakRss), `< ${RSS_BOUND_MIB} MiB`, verdict(peakRss < RSS_BOUND_MIB * 2 ** 20)],
      ['server process alive at the end', survived ? 'yes' : 'no', 'yes', verdict(survived)],
    ]),
    '',
    'What the attacker got:',
    '',
    table(['answer', 'count'], [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, int(v)])),
    '',
  ].join('\n')
  process.stdout.write(section + '\n')
  if (process.env.SOAK_WRITE !== '0') writeSection(section)
}

/** Replaces (or appends) this benchmark's own section of bench/RESULTS.md. */
function writeSection (section: string): void {
  const file = join(import.meta.dirname, 'RESULTS.md')
  const text = readFileSync(file, 'utf8')
  const start = text.indexOf(HEADING)
  if (start === -1) return writeFileSync(file, text.trimEnd() + '\n\n' + section)
  const next = text.indexOf('\n## ', start + HEADING.length)
  writeFileSync(file, text.slice(0, start) + section + (next === -1 ? '' : text.slice(next + 1)))
}

await main()
