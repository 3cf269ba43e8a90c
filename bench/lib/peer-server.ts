/**
 * The peer of the append benchmark: the Durable Streams reference server with its file-backed
 * store (`FileBackedStreamStore`: one append-only segment file per stream, LMDB metadata). Each
 * append is written, fdatasync'ed and its metadata committed before the server answers.
 * Prints `{"url": …}` once listening.
 * Usage: node --import tsx bench/lib/peer-server.ts <dataDir>
 */
import { DurableStreamTestServer } from '@durable-streams/server'

const dataDir = process.argv[2]
if (dataDir === undefined) throw new Error('usage: peer-server.ts <dataDir>')
const server = new DurableStreamTestServer({ host: '127.0.0.1', port: 0, dataDir, compression: false })
const url = await server.start()
process.stdout.write(JSON.stringify({ url }) + '\n')
process.on('SIGTERM', () => { void server.stop().then(() => process.exit(0)) })
