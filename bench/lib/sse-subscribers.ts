/**
 * SSE subscribers in their own process, so that parsing streams never takes the server's event
 * loop. Opens `count` streams (100 at a time), prints `{"ready": n}` once all answered 200, then
 * reads until every stream has received `expected` `entry` events or `timeoutMs` passed, and
 * prints one `{"report": …}` line.
 *
 * Per event it checks order (each `id:` is the previous one + 1; the first is `after + 1`) and,
 * in `latency` mode, records receive time minus the entry's `timestamp` (server-assigned at
 * append) and minus the `sent=<epoch ms>;` marker the appender put into the text. In `count`
 * mode it only counts events (cheap enough to measure a server's ceiling) and samples the
 * running total every 100 ms.
 * Usage: node --import tsx bench/lib/sse-subscribers.ts '<SubscriberConfig JSON>'
 */
import { request, type IncomingMessage } from 'node:http'
import { HISTOGRAM_BUCKETS, type LatencyHistogram, type SubscriberConfig, type SubscriberReport } from './sse-report.js'

const config = JSON.parse(process.argv[2] ?? '{}') as SubscriberConfig
let total = 0
let orderErrors = 0
let disconnected = 0
let finished = 0
const received = new Array<number>(config.count).fill(0)
const sinceAppend = new Array<number>(HISTOGRAM_BUCKETS).fill(0)
const sinceSend = new Array<number>(HISTOGRAM_BUCKETS).fill(0)

function record (hist: LatencyHistogram, ms: number): void {
  if (Number.isNaN(ms)) return
  const bucket = Math.min(HISTOGRAM_BUCKETS - 1, Math.max(0, Math.floor(ms)))
  hist[bucket] = (hist[bucket] as number) + 1
}

function parseEvent (i: number, block: string, now: number, last: { seq: number }): void {
  if (!block.startsWith('event: entry\n')) return // retry, ping, leaf or session events
  const at = block.indexOf('\nid: ')
  const seq = Number(block.slice(at + 5, block.indexOf('\n', at + 5)))
  if (seq !== last.seq + 1) orderErrors++
  last.seq = seq
  received[i] = (received[i] as number) + 1
  total++
  if (config.mode !== 'latency') return
  const ts = block.indexOf('"timestamp":"')
  const sent = block.indexOf('sent=')
  if (ts !== -1) record(sinceAppend, now - Date.parse(block.slice(ts + 13, ts + 37)))
  if (sent !== -1) record(sinceSend, now - Number(block.slice(sent + 5, block.indexOf(';', sent))))
}

/** Counts complete events (`\n\n`) without decoding, carrying one byte across chunks. */
function countingReader (i: number, res: IncomingMessage): void {
  let previous = 0
  res.on('data', (chunk: Buffer) => {
    let n = previous === 10 && chunk[0] === 10 ? 1 : 0
    for (let at = chunk.indexOf('\n\n'); at !== -1; at = chunk.indexOf('\n\n', at + 2)) n++
    previous = chunk[chunk.length - 1] as number
    received[i] = (received[i] as number) + n
    total += n
    checkDone(i)
  })
}

function parsingReader (i: number, res: IncomingMessage): void {
  let rest = ''
  const last = { seq: config.after }
  res.setEncoding('latin1')
  res.on('data', (chunk: string) => {
    const now = Date.now()
    let text = rest + chunk
    for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n')) {
      parseEvent(i, text.slice(0, end), now, last)
      text = text.slice(end + 2)
    }
    rest = text
    checkDone(i)
  })
}

const done = new Array<boolean>(config.count).fill(false)
const sockets: Array<{ destroy: () => void }> = []

function checkDone (i: number): void {
  // Count mode also counts the `retry:` frame: one more than the entries.
  const target = config.expected + (config.mode === 'count' ? 1 : 0)
  if (done[i] === true || (received[i] as number) < target) return
  done[i] = true
  finished++
  if (finished + disconnected >= config.count) report()
}

function open (i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(config.url, { agent: false, headers: { 'last-event-id': String(config.after), accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`stream ${i}: ${res.statusCode}`)); return }
      if (config.mode === 'count') countingReader(i, res)
      else parsingReader(i, res)
      const lost = (): void => {
        if (done[i] === true) return
        done[i] = true
        disconnected++
        if (finished + disconnected >= config.count) report()
      }
      res.on('end', lost)
      res.on('error', lost)
      resolve()
    })
    req.on('error', reject)
    sockets.push(req)
    req.end()
  })
}

const timeline: Array<[number, number]> = []
let reported = false
function report (): void {
  if (reported) return
  reported = true
  const usage = process.cpuUsage()
  const out: SubscriberReport = {
    subscribers: config.count,
    disconnected,
    orderErrors,
    minReceived: Math.min(...received),
    maxReceived: Math.max(...received),
    total,
    cpuS: (usage.user + usage.system) / 1e6,
  }
  if (config.mode === 'latency') {
    out.sinceAppend = sinceAppend
    out.sinceSend = sinceSend
  } else {
    out.timeline = timeline
  }
  process.stdout.write(JSON.stringify({ report: out }) + '\n', () => {
    for (const s of sockets) s.destroy()
    process.exit(0)
  })
}

for (let i = 0; i < config.count; i += 100) {
  await Promise.all(Array.from({ length: Math.min(100, config.count - i) }, (_, k) => open(i + k)))
}
process.stdout.write(JSON.stringify({ ready: config.count }) + '\n')
const sampler = setInterval(() => { timeline.push([Date.now(), total]) }, 100)
setTimeout(() => { clearInterval(sampler); report() }, config.timeoutMs).unref()
