/**
 * The soak's connection attack and its witness: clients that announce a huge body and dribble it
 * a byte at a time (reconnecting whenever the server cuts them), and health probes from another
 * loopback address (Linux routes all of 127/8 to `lo`) that must keep being answered.
 */
import { get } from 'node:http'
import { connect, type Socket } from 'node:net'
import { sleep } from './stats.js'

/** How long a probe may take before it counts as failed, in ms. */
export const PROBE_TIMEOUT_MS = 2000

export interface DribbleOptions {
  port: number
  /** Local address the sockets come from. */
  from: string
  /** What each socket sends first: complete headers and the start of a body. */
  head: string
  /** One body byte every this many ms. */
  everyMs: number
  /** While true, a socket the server closed is opened again (100 ms later). */
  running: () => boolean
  /** Called once per socket the server closed while running. */
  onCut: () => void
}

/** Opens `count` dribbling sockets; returns the set of open ones, for clean-up. */
export function dribble (count: number, options: DribbleOptions): Set<Socket> {
  const open = new Set<Socket>()
  const one = (): void => {
    if (!options.running()) return
    const s = connect({ port: options.port, host: '127.0.0.1', localAddress: options.from })
    open.add(s)
    s.on('error', () => {})
    s.resume()
    s.on('connect', () => { s.write(options.head) })
    const timer = setInterval(() => { if (s.writable) s.write(' ') }, options.everyMs)
    s.on('close', () => {
      clearInterval(timer)
      open.delete(s)
      if (!options.running()) return
      options.onCut()
      setTimeout(one, 100)
    })
  }
  for (let i = 0; i < count; i++) one()
  return open
}

/** `GET /healthz` from `from`: 0 when it failed or took longer than `PROBE_TIMEOUT_MS`, and the ms it took. */
export async function probe (port: number, from: string): Promise<{ status: number, ms: number }> {
  const start = performance.now()
  return await new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/healthz', localAddress: from, agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start }))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve({ status: 0, ms: performance.now() - start }))
  })
}

/** Probes every `everyMs` while `running()`; resolves every probe's latency and how many failed. */
export async function probeWhile (port: number, from: string, running: () => boolean, everyMs = 250): Promise<{ latencies: number[], failures: number }> {
  const latencies: number[] = []
  let failures = 0
  while (running()) {
    const { status, ms } = await probe(port, from)
    latencies.push(ms)
    if (status !== 200 || ms >= PROBE_TIMEOUT_MS) failures++
    await sleep(everyMs)
  }
  return { latencies, failures }
}
