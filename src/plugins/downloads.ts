/**
 * Streamed answers (blobs, exports) and the budget of bytes in flight per client
 * (src/http/download-budget.ts): `reply.sendDownload(size, body)` admits the answer against its
 * client's MAX_DOWNLOAD_BYTES_PER_TOKEN, or refuses it with 429 `SS_TOO_MANY_DOWNLOADS` and
 * `Retry-After`, then sends it with its length, read as the client takes it (backpressure).
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { Readable } from 'node:stream'
import { TooManyDownloads, withRetryAfter } from '../errors.js'
import { DownloadBudget } from '../http/download-budget.js'
import { clientKey } from './access.js'

/** Seconds a client refused for too many bytes in flight should wait. */
const DOWNLOAD_RETRY_AFTER_S = 5

/** What `sendDownload` sends: a length and the bytes, produced as they are read. */
export interface Download {
  size: number
  body: Readable | Iterable<Buffer> | AsyncIterable<Buffer>
  /** Releases the source when the answer is refused. */
  close: () => Promise<void>
}

async function downloads (app: FastifyInstance): Promise<void> {
  const max = app.config.maxDownloadBytesPerToken
  const budget = new DownloadBudget(max)
  app.decorateReply('sendDownload', async function (this: FastifyReply, download: Download): Promise<FastifyReply> {
    if (!budget.take(clientKey(this.request), download.size, this.raw)) {
      await download.close()
      this.header('retry-after', String(DOWNLOAD_RETRY_AFTER_S))
      throw withRetryAfter(new TooManyDownloads(max), DOWNLOAD_RETRY_AFTER_S)
    }
    const body = download.body instanceof Readable ? download.body : Readable.from(download.body, { objectMode: false })
    return this.header('content-length', String(download.size)).send(body)
  })
}

export default fp(downloads, { name: 'downloads', fastify: '5.x', dependencies: ['access'] })
