/**
 * Cold open of one session file in a fresh process, the way the server does it on a first
 * request: `SessionManager.open` on the disk storage, `buildSessionContext` of the leaf, and the
 * context serialized as the HTTP answer is (`jsonByteChunks`, the buffers `jsonStream` hands to
 * the socket, each let go at once). Prints `{"load": {...}}` with the timings and
 * the process's peak RSS (`process.resourceUsage().maxRSS`) before and after.
 * Usage: node --import tsx bench/lib/load-worker.ts <dataDir> <file>
 */
import { FileBlobStore } from '../../src/blobs/index.js'
import { jsonByteChunks } from '../../src/http/json-stream.js'
import { SessionManager } from '../../src/session/session-manager.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { join } from 'node:path'

const [dataDir, file] = process.argv.slice(2) as [string, string]
const peak = (): number => process.resourceUsage().maxRSS * 1024
const before = peak()
const t0 = performance.now()
const m = await SessionManager.open(file, undefined, new FileSessionStorage(), { dataDir, blobs: new FileBlobStore(join(dataDir, 'blobs')) })
const t1 = performance.now()
const context = m.buildSessionContext()
const t2 = performance.now()
let bodyBytes = 0
for (const chunk of jsonByteChunks(context, 'messages')) bodyBytes += chunk.length
const t3 = performance.now()
process.stdout.write(JSON.stringify({
  load: {
    entries: m.entryCount(),
    messages: context.messages.length,
    bodyBytes,
    openMs: t1 - t0,
    contextMs: t2 - t1,
    serializeMs: t3 - t2,
    peakBefore: before,
    peakAfter: peak(),
  },
}) + '\n')
await m.close()
