/**
 * The throughput baseline of the append benchmark: a bare Fastify app with the TypeBox type
 * provider and the very schema of `POST /v1/sessions/{id}/entries` (the shared schemas, the
 * same Ajv options, JSON.stringify serialization), whose handler does no I/O: it answers 201
 * with a result of the same shape and size as the real one. Prints `{"url": …}` once listening.
 * Usage: node --import tsx bench/lib/bare-fastify.ts
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify from 'fastify'
import { singleEntryAsBatch } from '../../routes/entries.js'
import { AppendEntries } from '../../routes/entries.schema.js'
import { registerSharedSchemas } from '../../src/schemas/shared.js'

const app = Fastify({
  logger: false,
  ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
}).withTypeProvider<TypeBoxTypeProvider>()
registerSharedSchemas(app)
app.setSerializerCompiler(() => (data) => JSON.stringify(data))

let seq = 0
app.post('/v1/sessions/:id/entries', { schema: AppendEntries, preValidation: singleEntryAsBatch }, async (req, reply) => {
  const body = (req.body as { entries: Array<Record<string, unknown>> }).entries[0] ?? {}
  seq++
  const id = (seq % 0xffffffff).toString(16).padStart(8, '0')
  const entry = { type: String(body.type), id, parentId: 'ffffffff', timestamp: new Date().toISOString(), ...body }
  reply.code(201).header('etag', '"AAAAAAAAAAAAAAAAAAAAAA"')
  return { entries: [entry], leafId: id, firstSeq: seq, lastSeq: seq, persisted: true }
})

const url = await app.listen({ host: '127.0.0.1', port: 0 })
process.stdout.write(JSON.stringify({ url }) + '\n')
process.on('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
