/**
 * Long form of test/faults/http.fuzz.test.ts: many more generated and mutated requests against
 * a real listening app over FileSessionStorage (time-bounded), plus a few raw requests with
 * broken HTTP framing, which undici cannot send.
 *
 *   npx tsx bench/faults/http-fuzz.ts [--requests 150000] [--concurrency 32] [--seed N]
 *     [--max-seconds 100] [--skip deep,big]
 */
import net from 'node:net'
import { buildTestApp } from '../../test/helpers/app.js'
import { runHttpFuzz } from '../../test/faults/support/http-fuzz.js'
import { seedFromEnv } from '../../test/faults/support/prng.js'
import { flag, numberFlag, report } from './args.js'

const seed = numberFlag('seed', seedFromEnv())
const skip = flag('skip', '').split(',').filter((s) => s !== '')
const result = await runHttpFuzz({
  seed,
  requests: numberFlag('requests', 150_000),
  concurrency: numberFlag('concurrency', 32),
  maxMs: numberFlag('max-seconds', 100) * 1000,
  skip,
})
const rps = Math.round(result.answered / (result.ms / 1000))
const without = skip.length > 0 ? ` (without ${skip.join(', ')})` : ''
console.log(`http fuzz: seed ${seed}${without}, ${result.answered} answered, ${result.unsent} unsent, ` +
  `${(result.ms / 1000).toFixed(1)} s, ${rps} req/s`)
console.log(`  statuses ${JSON.stringify(result.statuses)}`)
for (const line of result.serverErrors.slice(0, 5)) console.log(`  server error log: ${line.slice(0, 300)}`)

/** Raw requests with broken framing: the answer must still be problem+json. */
const RAW = [
  'GARBAGE\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
  'POST /v1/sessions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  `GET /healthz HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`,
]
const app = await buildTestApp()
const port = Number(new URL(await app.listen({ host: '127.0.0.1', port: 0 })).port)
const framing: string[] = []
for (const raw of RAW) {
  const answer = await new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(raw))
    let text = ''
    socket.on('data', (d: Buffer) => { text += d.toString('latin1') }).on('close', () => resolve(text)).on('error', () => resolve(text))
  })
  const head = answer.split('\r\n\r\n')[0] ?? ''
  if (!/^content-type: application\/problem\+json/im.test(head)) {
    framing.push(`broken framing ${JSON.stringify(raw.slice(0, 50))} answered without problem+json: ${JSON.stringify(answer.slice(0, 160))}`)
  }
}
await app.close()
report([...result.problems, ...framing])
