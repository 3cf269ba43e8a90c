/**
 * The fan-out baseline: a minimal `node:http` SSE broadcaster. `GET /events` joins the audience
 * (`retry` first, like session-store); `POST /publish` turns its body into one `entry` frame,
 * serialized once into a Buffer. Frames published while a write is pending are batched: once per
 * event-loop turn the pending frames are joined into one Buffer, and that same Buffer is written
 * to every socket; each publish is answered 204 once its frame was handed to every socket. No
 * schema, no storage, no per-subscriber state beyond the socket.
 * Prints `{"url": …}` once listening.
 * Usage: node --import tsx bench/lib/broadcaster.ts
 */
import { createServer, type ServerResponse } from 'node:http'

const audience = new Set<ServerResponse>()
let seq = 0
let pending: Buffer[] = []
let answers: ServerResponse[] = []
let scheduled = false

function flush (): void {
  scheduled = false
  const batch = pending.length === 1 ? pending[0] as Buffer : Buffer.concat(pending)
  const answered = answers
  pending = []
  answers = []
  for (const sub of audience) sub.write(batch)
  for (const res of answered) res.writeHead(204).end()
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/events') === true) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
    res.write('retry: 1000\n\n')
    audience.add(res)
    res.on('close', () => { audience.delete(res) })
    return
  }
  if (req.method === 'POST' && req.url === '/publish') {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      seq++
      pending.push(Buffer.from(`event: entry\nid: ${seq}\ndata: ${Buffer.concat(chunks).toString()}\n\n`))
      answers.push(res)
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })
    return
  }
  res.writeHead(404).end()
})

server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no address')
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }) + '\n')
})
process.on('SIGTERM', () => {
  for (const sub of audience) sub.destroy()
  server.close(() => process.exit(0))
})
