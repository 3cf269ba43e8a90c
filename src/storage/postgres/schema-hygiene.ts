/**
 * Migration 11: when a blob's bytes were last put (`ss_blobs.touched_at`). A put of bytes a
 * tenant already has sets it to now, and a collection (src/hygiene/blob-gc.ts) removes an
 * unreferenced blob only when it was not put within the grace period, in a statement that
 * rechecks `touched_at` under the row's lock, so that a put racing the removal keeps its blob.
 * Rows stored before this migration count as put when it ran: they are kept for one grace
 * period after the upgrade.
 */
import type { Migration } from './migration.js'

export const HYGIENE_MIGRATIONS: readonly Migration[] = [
  {
    version: 11,
    name: 'blobs: when their bytes were last put, for collecting unreferenced ones',
    sql: `
ALTER TABLE ss_blobs ADD COLUMN touched_at timestamptz NOT NULL DEFAULT now();
`,
  },
]
