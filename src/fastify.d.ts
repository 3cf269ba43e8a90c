/** Every decorator of the app, declared once (set in `buildApp`, src/app.ts). */
import type { BlobStore } from './blobs/types.js'
import type { Config } from './config.js'
import type { SessionRegistry } from './registry/session-registry.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Open sessions by id, over the storage chosen at start-up. */
    registry: SessionRegistry
    /** Content-addressed blobs (SPEC.md §9.4). */
    blobs: BlobStore
    config: Config
  }

  interface FastifyContextConfig {
    /**
     * The route takes a JSONL/text body (`application/x-ndjson`, `application/jsonl`,
     * `text/plain`) as one string; see src/plugins/body-parsers.ts.
     */
    textBody?: boolean
  }
}
