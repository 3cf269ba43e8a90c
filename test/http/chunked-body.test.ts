/**
 * A live stream's body goes straight to its socket as HTTP/1.1 chunks, each shared payload
 * framed once; without a network socket (`inject`) it goes through the response.
 */
import { createServer, request, type ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { bodyOutput, httpChunk } from '../../src/http/chunked-body.js'

describe('httpChunk', () => {
  it('frames a payload as one chunk, once per Buffer', () => {
    const payload = Buffer.from('data: é\n\n')
    const chunk = httpChunk(payload)
    expect(chunk.toString()).toBe(`${payload.length.toString(16)}\r\ndata: é\n\n\r\n`)
    expect(httpChunk(payload)).toBe(chunk)
    expect(httpChunk('data: é\n\n').equals(chunk)).toBe(true)
  })
})

describe('bodyOutput', () => {
  it('writes chunks to the socket that a client reads as the body, ended by the response', async () => {
    let output: ReturnType<typeof bodyOutput> | undefined
    const server = createServer((_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.flushHeaders()
      output = bodyOutput(res)
      output.stream.write(output.encode('one\n\n'))
      output.stream.write(output.encode(Buffer.from('two\n\n')))
      res.end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    const body = await new Promise<string>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/' }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => { text += chunk })
        res.on('end', () => { resolve(text) })
      }).on('error', reject).end()
    })
    server.close()
    expect(output?.stream).toBeInstanceOf(Socket)
    expect(body).toBe('one\n\ntwo\n\n')
  })
})
