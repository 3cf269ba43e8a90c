/**
 * The fan-out ceiling baseline: a minimal `node:http` SSE broadcaster. `GET /events` joins the
 * audience (`retry` first, like session-store); `POST /publish` wraps its body into one
 * pre-serialized `entry` frame and writes that same string to every socket, then answers 204.
 * No schema, no storage, no per-subscriber state. Prints `{"url": …}` once listening.
 * Usage: node --import tsx bench/lib/broadcaster.ts
 */
import { createServer, type ServerResponse } from 'node:http'

const audience = new Set<ServerResponse>()
let seq = 0

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
      const frame = `event: entry\nid: ${seq}\ndata: ${Buffer.concat(chunks).toString()}\n\n`
      for (const sub of audience) sub.write(frame)
      res.writeHead(204).end()
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
