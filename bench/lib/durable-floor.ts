/**
 * The least a durable append server does, as a floor for the append benchmark: `node:http`, no
 * framework, no schema, no logger. `POST /files/{n}` parses the JSON body, makes it one line and
 * appends it to file `n` (`O_APPEND`); it answers 201 `{"persisted":true}` after `fs.fdatasync`
 * of that file completed after the line's write, as SPEC.md §8.4 asks of every append. Lines that
 * arrive while a file's write and sync are in flight are joined into its next write, with one
 * sync for all of them (the group commit of §8.4). Nothing else: no ids, no tree, no index.
 * With `--dsync` the files are opened `O_DSYNC` and there is no `fdatasync`: each write returns
 * once its data is durable, one thread-pool hand-off per write instead of two.
 * With `--fastify` the same appends are served by a Fastify route (JSON body parsed by Fastify, no
 * schema, no hooks) that logs one `info` line per answered request to /dev/null with Fastify's
 * pino logger, as session-store logs one: what a Fastify server that logs its requests leaves of
 * the floor before any work of its own.
 * Spawned with `--require scripts/start.cjs`, so its thread pool is sized as `npm start` sizes the
 * server's. Prints `{"url": …}` once listening; its files live in a fresh directory under `dir`.
 * Usage: node --require scripts/start.cjs --import tsx bench/lib/durable-floor.ts <dir> [--dsync | --fastify]
 */
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import fs from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'

interface FileQueue {
  fd: number
  /** Lines waiting for the next write. */
  lines: string[]
  /** Answers owed once the lines now in `lines` are durable. */
  waiting: Array<(err: Error | null) => void>
  busy: boolean
}

const root = fs.mkdtempSync(join(process.argv[2] ?? '.', 'bench-durable-floor-'))
/** `O_DSYNC` writes instead of write + `fdatasync`. */
const DSYNC = process.argv.includes('--dsync')
const { O_APPEND, O_CREAT, O_DSYNC, O_WRONLY } = fs.constants
const FLAGS = O_WRONLY | O_CREAT | O_APPEND | (DSYNC ? O_DSYNC : 0)
const files = new Map<string, FileQueue>()

function fileQueue (name: string): FileQueue {
  let q = files.get(name)
  if (q === undefined) {
    q = { fd: fs.openSync(join(root, `${name}.jsonl`), FLAGS), lines: [], waiting: [], busy: false }
    files.set(name, q)
  }
  return q
}

/** Writes every queued line in one write, then fdatasync, then answers them; again while lines wait. */
function commit (q: FileQueue): void {
  q.busy = true
  const buf = Buffer.from(q.lines.join(''), 'utf8')
  const waiting = q.waiting
  q.lines = []
  q.waiting = []
  const done = (err: Error | null): void => {
    for (const answer of waiting) answer(err)
    q.busy = false
    if (q.lines.length > 0) commit(q)
  }
  const write = (offset: number): void => {
    fs.write(q.fd, buf, offset, buf.length - offset, null, (err, n) => {
      if (err !== null) return done(err)
      if (offset + n < buf.length) return write(offset + n)
      if (DSYNC) done(null) // the write returned once durable
      else fs.fdatasync(q.fd, done)
    })
  }
  write(0)
}

function append (name: string, line: string, answer: (err: Error | null) => void): void {
  const q = fileQueue(name)
  q.lines.push(line)
  q.waiting.push(answer)
  if (!q.busy) commit(q)
}

/** `POST /files/{n}` on node:http: the body read and parsed by hand. */
function plainServer (): http.Server {
  return http.createServer((req, res) => {
    const name = /^\/files\/(\d{1,6})$/.exec(req.url ?? '')?.[1]
    if (req.method !== 'POST' || name === undefined) {
      res.writeHead(404).end()
      return
    }
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    req.on('end', () => {
      let line: string
      try {
        line = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8'))) + '\n'
      } catch {
        res.writeHead(400).end()
        return
      }
      append(name, line, (err) => {
        if (err !== null) res.writeHead(507).end()
        else res.writeHead(201, { 'content-type': 'application/json' }).end('{"persisted":true}')
      })
    })
  })
}

/** Fastify's request logging, one line per answered request, with the fields session-store's line has. */
class OneLineLog extends LogController {
  override incomingRequest (): void {}
  override requestCompleted (_err: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    reply.log.info({ method: req.method, url: req.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime, remoteAddress: req.ip }, 'request completed')
  }
}

/** `POST /files/{n}` on Fastify, one `info` line per answered request (`--fastify`). */
async function fastifyServer (): Promise<http.Server> {
  const app = Fastify({ logger: { level: 'info', file: '/dev/null' }, logController: new OneLineLog(), bodyLimit: 1024 * 1024 })
  // As on node:http, only a number names a file (any other path is 404).
  app.post<{ Params: { n: string } }>('/files/:n(^\\d{1,6}$)', (req, reply) => {
    append(req.params.n, JSON.stringify(req.body) + '\n', (err) => {
      if (err !== null) void reply.code(507).send()
      else void reply.code(201).type('application/json').send('{"persisted":true}')
    })
  })
  await app.ready()
  return app.server
}

const server = process.argv.includes('--fastify') ? await fastifyServer() : plainServer()
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number }
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}` }) + '\n')
})
process.on('SIGTERM', () => {
  server.close()
  for (const q of files.values()) fs.closeSync(q.fd)
  fs.rmSync(root, { recursive: true, force: true })
  process.exit(0)
})
