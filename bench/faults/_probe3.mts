import net from 'node:net'
import { buildTestApp } from '../../test/helpers/app.js'
const app = await buildTestApp()
const base = await app.listen({ host: '127.0.0.1', port: 0 })
const port = Number(new URL(base).port)
for (const raw of ['GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 'GARBAGE\r\n\r\n', 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', `GET /healthz HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(20000)}\r\n\r\n`, 'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']) {
  const out = await new Promise<string>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.end(raw))
    let buf = ''
    s.on('data', (d) => { buf += d.toString() }).on('close', () => resolve(buf)).on('error', () => resolve(buf))
  })
  console.log(JSON.stringify(raw.slice(0, 40)), '→', JSON.stringify(out.slice(0, 200)))
}
await app.close()
