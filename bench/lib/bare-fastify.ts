/**
 * The throughput baseline of the append benchmark, the one the performance targets name: a bare
 * Fastify POST of a ~1 KB JSON body validated by a TypeBox schema (compiled by
 * `TypeBoxValidatorCompiler`), no I/O, no logger, answering 201 `{ok, id}`. `BARE_BODY` is the
 * body it is sent. Prints `{"url": …}` once listening.
 * Usage: node --import tsx bench/lib/bare-fastify.ts
 */
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import Fastify from 'fastify'

const EntryBody = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  parentId: Type.Union([Type.String({ maxLength: 64 }), Type.Null()]),
  type: Type.String({ maxLength: 32 }),
  ts: Type.Number(),
  data: Type.Object({
    role: Type.String({ maxLength: 32 }),
    text: Type.String({ maxLength: 600_000 }),
    tags: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 }),
  }),
}, { additionalProperties: false })

/** A body of `bytes` bytes that the baseline validates. */
export function bareBody (bytes = 1024): string {
  const body: Static<typeof EntryBody> = {
    id: '0192f1c2-7d3e-7a10-9c4b-5e6f7a8b9c0d',
    parentId: '0192f1c2-7d3e-7a10-9c4b-5e6f7a8b9c0c',
    type: 'message',
    ts: 1733150000000,
    data: { role: 'user', text: '', tags: ['a', 'bench'] },
  }
  body.data.text = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27)).slice(0, Math.max(0, bytes - JSON.stringify(body).length))
  return JSON.stringify(body)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 })
  app.setValidatorCompiler(TypeBoxValidatorCompiler)
  app.post('/entries', { schema: { body: EntryBody } }, async (req, reply) => {
    reply.code(201)
    return { ok: true, id: (req.body as Static<typeof EntryBody>).id }
  })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  process.stdout.write(JSON.stringify({ url }) + '\n')
  process.on('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
}
