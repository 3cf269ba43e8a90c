/**
 * `GET export?images=inline`: the stored file for a reader without a blob store (pi 0.73). Every
 * line that holds a blob ref is parsed, its refs in the positions the agents resolve are
 * replaced by their data (SPEC.md §9.5, docs/compatibility.md), and it is written again as JSON;
 * every other line is sent as stored. A line an agent wrote with inline images, stored with
 * refs, so comes back as the agent wrote it.
 */
import { stringifyJson } from '../session/json-text.js'
import { resolveBlobRefs } from '../session/persist-transform.js'
import type { FileRecord } from '../session/types.js'
import type { RegistryCore } from './registry-core.js'
import type { ExportStream } from './types.js'

/** How an export shows images: `ref` as stored (the default), `inline` with their data. */
export type ImagesMode = 'ref' | 'inline'

/** `stream` with its refs inlined; read whole (the length of the answer is sent first). */
export async function withInlineImages (core: RegistryCore, stream: ExportStream): Promise<ExportStream> {
  const parts: Buffer[] = []
  try {
    for await (const chunk of stream.chunks) parts.push(chunk)
  } finally {
    await stream.close()
  }
  const text = Buffer.concat(parts).toString('utf8')
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (line.includes('blob:sha256:')) lines[i] = await inlineLine(core, line)
  }
  const bytes = Buffer.from(lines.join('\n'), 'utf8')
  return { size: bytes.length, chunks: [bytes], close: async () => {} }
}

async function inlineLine (core: RegistryCore, line: string): Promise<string> {
  let record: unknown
  try { record = JSON.parse(line) } catch { return line }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return line
  const before = stringifyJson(record)
  await resolveBlobRefs([record as FileRecord], core.blobs, (hash) => { core.log.warn({ hash }, 'Blob not found for image reference') })
  const after = stringifyJson(record)
  // Nothing resolved (no ref in a reader position, or only missing blobs): the line as stored.
  return after === undefined || after === before ? line : after
}
