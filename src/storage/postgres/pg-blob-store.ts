/**
 * `BlobStore` in PostgreSQL (`STORAGE=postgres`): one row of `ss_blobs` per tenant and hash,
 * the bytes in `data`. Content addressing makes a put idempotent: `INSERT … ON CONFLICT DO
 * NOTHING` stores the bytes once however many instances put them at the same time, and the
 * put that inserted the row is the one that reports `created: true`. Each put is its own
 * transaction, committed (and so durable) when it returns.
 *
 * Reads stream: `open` fetches the size and the first bytes, and the stream then reads the
 * bytes in slices of `chunkBytes` (default 1 MiB) with `substring(data FROM … FOR …)`, one
 * statement per slice as the consumer pulls, so neither this process nor a pool connection
 * holds a whole large blob, and no connection is held between slices. A blob's bytes never
 * change, so slices read by different statements belong to the same bytes (a collection may
 * remove an unreferenced blob while it is read: the stream then fails). (A slice of an
 * out-of-line value is read without detoasting the rest; image bytes do not compress, so
 * PostgreSQL stores them uncompressed and each slice costs its own size. A large compressible
 * blob is decompressed up to the slice's end for each slice.) `get` returns the whole blob.
 *
 * `touched_at` (schema-hygiene.ts) is when the bytes were last put: a put of stored bytes sets
 * it to now, and `remove` deletes only rows whose `touched_at` is older than its bound, rechecked
 * under the row lock the put's update also takes.
 *
 * An outage of the database surfaces as `DatabaseUnavailable` (503, `SS_DATABASE_UNAVAILABLE`).
 */
import { Readable } from 'node:stream'
import type pg from 'pg'
import { assertBlobHash, blobRefFor, sha256Hex } from '../../blobs/hash.js'
import { HEAD_BYTES } from '../../blobs/reader.js'
import { sniffContentType } from '../../blobs/sniff.js'
import type { BlobPutResult, BlobReader, BlobStat, BlobStore, BlobUsage } from '../../blobs/types.js'
import { query } from './pool.js'

export interface PgBlobStoreOptions {
  /** Bytes per statement when streaming a blob (default 1 MiB). */
  chunkBytes?: number
  /** Hashes per statement when listing (default 1000). */
  listPage?: number
}

/** Above this size a put first asks whether the blob exists, so known bytes are not sent again. */
const CHECK_FIRST_BYTES = 64 * 1024

export class PgBlobStore implements BlobStore {
  readonly #pool: pg.Pool
  readonly #tenant: string
  readonly #chunkBytes: number
  readonly #listPage: number

  /** The blobs of `tenant` in the database behind `pool` (migrated to the current schema). */
  constructor (pool: pg.Pool, tenant: string, options: PgBlobStoreOptions = {}) {
    this.#pool = pool
    this.#tenant = tenant
    this.#chunkBytes = options.chunkBytes ?? 1024 * 1024
    this.#listPage = options.listPage ?? 1000
  }

  /** Stores `bytes` under their SHA-256 unless the tenant has them; committed on return. */
  async put (bytes: Uint8Array): Promise<BlobPutResult> {
    const hash = sha256Hex(bytes)
    const result: BlobPutResult = { hash, ref: blobRefFor(hash), created: false }
    if (bytes.length > CHECK_FIRST_BYTES && await this.#touch(hash)) return result
    // `xmax = 0` holds for a row this statement inserted, not for one it updated.
    const { rows } = await query<{ created: boolean }>(this.#pool,
      `INSERT INTO ss_blobs (tenant, hash, media_type, size, data) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant, hash) DO UPDATE SET touched_at = now() RETURNING (xmax = 0) AS created`,
      [this.#tenant, hash, sniffContentType(bytes), bytes.length, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)])
    return { ...result, created: rows[0]?.created === true }
  }

  /** The tenant's blobs in hash order, a page per statement. */
  async * scan (): AsyncIterable<BlobStat> {
    let after = ''
    for (;;) {
      const { rows } = await query<{ hash: string, size: string, touched: number }>(this.#pool,
        `SELECT hash, size, extract(epoch FROM touched_at) * 1000 AS touched FROM ss_blobs
         WHERE tenant = $1 AND hash > $2 ORDER BY hash LIMIT $3`, [this.#tenant, after, this.#listPage])
      for (const row of rows) yield { hash: row.hash, size: Number(row.size), touchedMs: Number(row.touched) }
      if (rows.length < this.#listPage) return
      after = rows[rows.length - 1]?.hash ?? after
    }
  }

  /** One statement per page of hashes; each row's `touched_at` is checked again under its lock. */
  async remove (hashes: readonly string[], untouchedBefore: number): Promise<BlobStat[]> {
    for (const hash of hashes) assertBlobHash(hash)
    const removed: BlobStat[] = []
    for (let i = 0; i < hashes.length; i += this.#listPage) {
      const { rows } = await query<{ hash: string, size: string, touched: number }>(this.#pool,
        `DELETE FROM ss_blobs WHERE tenant = $1 AND hash = ANY($2::text[]) AND touched_at < to_timestamp($3::double precision / 1000)
         RETURNING hash, size, extract(epoch FROM touched_at) * 1000 AS touched`,
        [this.#tenant, hashes.slice(i, i + this.#listPage), untouchedBefore])
      for (const row of rows) removed.push({ hash: row.hash, size: Number(row.size), touchedMs: Number(row.touched) })
    }
    return removed
  }

  async usage (): Promise<BlobUsage> {
    const { rows } = await query<{ blobs: string, bytes: string }>(this.#pool,
      'SELECT count(*) AS blobs, coalesce(sum(size), 0) AS bytes FROM ss_blobs WHERE tenant = $1', [this.#tenant])
    return { blobs: Number(rows[0]?.blobs ?? 0), bytes: Number(rows[0]?.bytes ?? 0) }
  }

  /** Marks stored bytes as put now; false when the tenant has none of that hash. */
  async #touch (hash: string): Promise<boolean> {
    const { rowCount } = await query(this.#pool, 'UPDATE ss_blobs SET touched_at = now() WHERE tenant = $1 AND hash = $2', [this.#tenant, hash])
    return rowCount === 1
  }

  /** The bytes, or `null` when absent. Rejects with `InvalidArgument` before any query for an invalid hash. */
  async get (hash: string): Promise<Buffer | null> {
    assertBlobHash(hash)
    const { rows } = await query<{ data: Buffer }>(this.#pool,
      'SELECT data FROM ss_blobs WHERE tenant = $1 AND hash = $2', [this.#tenant, hash])
    return rows[0]?.data ?? null
  }

  /** Rejects with `InvalidArgument` before any query for an invalid hash. */
  async has (hash: string): Promise<boolean> {
    assertBlobHash(hash)
    const { rowCount } = await query(this.#pool,
      'SELECT 1 FROM ss_blobs WHERE tenant = $1 AND hash = $2', [this.#tenant, hash])
    return rowCount === 1
  }

  /**
   * Size and first bytes now; the bytes themselves a slice per statement as the stream is read.
   * `null` when absent. Rejects with `InvalidArgument` before any query for an invalid hash.
   */
  async open (hash: string): Promise<BlobReader | null> {
    assertBlobHash(hash)
    const { rows } = await query<{ size: string, head: Buffer }>(this.#pool,
      'SELECT size, substring(data FROM 1 FOR $3) AS head FROM ss_blobs WHERE tenant = $1 AND hash = $2',
      [this.#tenant, hash, HEAD_BYTES])
    const row = rows[0]
    if (row === undefined) return null
    const size = Number(row.size)
    return { size, head: row.head, stream: () => Readable.from(this.#slices(hash, size), { objectMode: false }), close: async () => {} }
  }

  /** The tenant's hashes in hash order, a page per statement. */
  async * list (): AsyncIterable<string> {
    let after = ''
    for (;;) {
      const { rows } = await query<{ hash: string }>(this.#pool,
        'SELECT hash FROM ss_blobs WHERE tenant = $1 AND hash > $2 ORDER BY hash LIMIT $3', [this.#tenant, after, this.#listPage])
      for (const row of rows) yield row.hash
      if (rows.length < this.#listPage) return
      after = rows[rows.length - 1]?.hash ?? after
    }
  }

  async * #slices (hash: string, size: number): AsyncGenerator<Buffer> {
    for (let offset = 0; offset < size; offset += this.#chunkBytes) {
      const { rows } = await query<{ chunk: Buffer }>(this.#pool,
        'SELECT substring(data FROM $3 FOR $4) AS chunk FROM ss_blobs WHERE tenant = $1 AND hash = $2',
        [this.#tenant, hash, offset + 1, this.#chunkBytes])
      const chunk = rows[0]?.chunk
      if (chunk === undefined) throw new Error(`Blob ${hash} disappeared while it was read`)
      yield chunk
    }
  }
}
