/**
 * Migration 12: indexing for search (pg-search-queue.ts) no longer holds up appends.
 *
 * Under migration 10 the documents of `ss_search` referenced their session: writing them took a
 * `FOR KEY SHARE` lock on every session of a batch, and an append, which locks its session's row
 * `FOR UPDATE`, waited for the whole batch to commit. The documents now reference nothing. What
 * the foreign key gave is kept by the session's advisory lock (`ss_search_lock`), which only the
 * indexer and the removal of documents take: a removed session's documents and the documents of
 * removed lines are deleted under it, so a batch indexing them either commits first (and its
 * documents are deleted) or runs after the removal (and sees the lines gone).
 *
 * Documents are kept whole in their row (`toast_tuple_target`): compressing a tsvector and its
 * text cost more of the indexer's time than writing them, for a quarter less space.
 */
import type { Migration } from './migration.js'

export const SEARCH_DRAIN_MIGRATIONS: readonly Migration[] = [
  {
    version: 12,
    name: 'search documents without a foreign key, so indexing never waits on or holds up appends',
    sql: `
ALTER TABLE ss_search DROP CONSTRAINT ss_search_tenant_session_fkey;
ALTER TABLE ss_search SET (toast_tuple_target = 8160);

-- The key of a session's advisory lock; locks are taken in the order of their keys.
CREATE FUNCTION ss_search_lock (p_tenant text, p_session text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $fn$ SELECT hashtextextended(p_tenant || E'\\n' || p_session, 10) $fn$;

CREATE OR REPLACE FUNCTION ss_search_lines_removed () RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(k.key) FROM (SELECT DISTINCT ss_search_lock(o.tenant, o.session) AS key FROM ss_old_lines o) k ORDER BY k.key;
  DELETE FROM ss_search s USING ss_old_lines o WHERE s.tenant = o.tenant AND s.session = o.session AND s.pos = o.pos;
  RETURN NULL;
END
$fn$;

CREATE FUNCTION ss_search_sessions_removed () RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(k.key) FROM (SELECT DISTINCT ss_search_lock(o.tenant, o.id) AS key FROM ss_old_sessions o) k ORDER BY k.key;
  DELETE FROM ss_search s USING ss_old_sessions o WHERE s.tenant = o.tenant AND s.session = o.id;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER ss_sessions_search_removed AFTER DELETE ON ss_sessions REFERENCING OLD TABLE AS ss_old_sessions
  FOR EACH STATEMENT EXECUTE FUNCTION ss_search_sessions_removed();
`,
  },
]
