/** A TCP port on 127.0.0.1 for a child process to listen on. */
import { once } from 'node:events'
import { createServer } from 'node:net'

/** A TCP port that was free a moment ago. */
export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as { port: number }).port
  server.close()
  await once(server, 'close')
  return port
}
