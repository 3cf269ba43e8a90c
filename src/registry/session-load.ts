/**
 * Reading a session from its store into a model (SPEC.md §5.3, §4.4, §9.5): parsed as it is
 * read, migrated (and the migration stored at once, as a whole replacement), its blob refs
 * resolved, and what another server appended since added the same way.
 */
import type { BlobStore } from '../blobs/types.js'
import { SessionNotFound } from '../errors.js'
import { listingItem } from '../session/listing-item.js'
import type { Logger } from '../session/logger.js'
import { migrateSessionEntries } from '../session/migrate.js'
import { parseJsonlLenient } from '../session/parser.js'
import { prepareRecordForWrite, resolveBlobRefs, serializeRecord } from '../session/persist-transform.js'
import { publicHeader } from '../session/public-header.js'
import { classifyParsed, parseChunks } from '../session/session-loader.js'
import { SessionModel } from '../session/session-model.js'
import { SessionSummary } from '../session/session-summary.js'
import type { FileRecord } from '../session/types.js'
import type { LoadedSession, StoredLine } from '../storage/store.js'
import { OpenSession } from './open-session.js'

export interface LoadContext {
  blobs: BlobStore
  log: Logger
  /** The tenant's root, for the headers answers show. */
  dataDir: string
}

/** The stored lines of `records` (§9 applied; image bytes stored first). */
export async function storedLines (records: readonly FileRecord[], blobs: BlobStore): Promise<StoredLine[]> {
  const lines: StoredLine[] = []
  for (const record of records) {
    const line = serializeRecord(await prepareRecordForWrite(record, blobs)).slice(0, -1)
    lines.push({ id: typeof record.id === 'string' && record.type !== 'session' ? record.id : null, line })
  }
  return lines
}

/**
 * The open session of `loaded` (`id` as the store found it). A file whose header no longer names
 * `id` (replaced by hand) is not that session: 404. The journal is closed again on any failure.
 */
export async function openLoaded (ctx: LoadContext, id: string, loaded: LoadedSession): Promise<OpenSession> {
  const { journal } = loaded
  try {
    const file = classifyParsed(`of session ${id}`, await parseChunks(loaded.text, loaded.size))
    if (file.kind !== 'valid' || file.records[0]?.id !== id) throw new SessionNotFound(id)
    const records = file.records
    const migrated = migrateSessionEntries(records)
    if (migrated) {
      const summary = SessionSummary.of(records)
      const info = listingItem(publicHeader(records[0] as FileRecord, ctx.dataDir), summary, loaded.modifiedMs)
      const outcome = await journal.replace(await storedLines(records, ctx.blobs), info)
      if (!outcome.ok) throw new SessionNotFound(id) // changed meanwhile: loaded again by the next request
    }
    await resolveRefs(ctx, migrated ? records.slice(1) : [...file.refCandidates])
    return new OpenSession(id, new SessionModel(records), journal, loaded.modifiedMs, loaded.size)
  } catch (err) {
    await journal.close().catch(() => {})
    throw err
  }
}

/** Records of `lines` (appended by another server), their blob refs resolved. */
export async function recordsOf (ctx: LoadContext, lines: readonly string[]): Promise<FileRecord[]> {
  const records = parseJsonlLenient(lines.join('\n'))
  await resolveRefs(ctx, records)
  return records
}

/** Resolves the blob refs of `records` in place (§9.5); a missing blob is logged and left as its ref. */
export async function resolveRefs (ctx: LoadContext, records: readonly FileRecord[]): Promise<void> {
  await resolveBlobRefs(records as FileRecord[], ctx.blobs, (hash) => { ctx.log.warn({ hash }, 'Blob not found for image reference') })
}
