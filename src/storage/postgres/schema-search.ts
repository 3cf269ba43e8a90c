/**
 * Migration 10: full-text search of the session log (pg-search.ts). `ss_search` holds one row
 * per searchable document of a line (src/search/extract.ts; `pos` 0 is the head, for the title),
 * cut into chunks of at most 50,000 characters so that no `tsvector` outgrows its limits, with
 * its text as the index holds it and its `tsvector` under a GIN index. The configuration
 * `ss_search` is `simple` (no stemming, so every language is cut the same way) with accents
 * folded by `unaccent` (a trusted extension of PostgreSQL's contrib), as the disk index folds them.
 *
 * Appends stay as fast as before: a statement-level trigger on `ss_lines` only queues the
 * positions a statement inserted (`ss_search_queue`, one row each), and a head change queues
 * position 0; every server drains the queue within a second, parsing the lines in the server.
 * Removed lines take their documents with them in their own statement (a replace); a removed
 * session takes them by its foreign key. Migration 12 (schema-search-drain.ts) drops that key
 * for a trigger, so that indexing never locks a session's row.
 */
import type { Migration } from './migration.js'

export const SEARCH_MIGRATIONS: readonly Migration[] = [
  {
    version: 10,
    name: 'full-text search: documents of lines with tsvectors, filled from a queue the appends feed',
    sql: `
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH CONFIGURATION ss_search (COPY = simple);
-- The extension may live in another schema than this one (a database shared by several schemas).
DO $do$ DECLARE v_schema text; BEGIN
  SELECT n.nspname INTO v_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent';
  EXECUTE format('ALTER TEXT SEARCH CONFIGURATION ss_search ALTER MAPPING FOR word, numword, hword, hword_part, numhword, hword_numpart WITH %I.unaccent, simple', v_schema);
END $do$;

CREATE TABLE ss_search (
  tenant   text             NOT NULL,
  session  text COLLATE "C" NOT NULL,
  pos      integer          NOT NULL,
  part     smallint         NOT NULL,
  chunk    smallint         NOT NULL,
  seq      bigint GENERATED ALWAYS AS IDENTITY,
  entry_id text,
  type     text             NOT NULL,
  role     text,
  ts       text             NOT NULL,
  body     text             NOT NULL,
  tsv      tsvector         NOT NULL,
  PRIMARY KEY (tenant, session, pos, part, chunk),
  FOREIGN KEY (tenant, session) REFERENCES ss_sessions (tenant, id) ON DELETE CASCADE
);
CREATE INDEX ss_search_tsv ON ss_search USING gin (tsv);
CREATE INDEX ss_search_newest ON ss_search (tenant, seq DESC);

CREATE TABLE ss_search_queue (
  id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant    text             NOT NULL,
  session   text COLLATE "C" NOT NULL,
  pos       integer          NOT NULL,
  queued_at timestamptz      NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION ss_search_lines_added () RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO ss_search_queue (tenant, session, pos) SELECT n.tenant, n.session, n.pos FROM ss_new_lines n;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER ss_lines_search_added AFTER INSERT ON ss_lines REFERENCING NEW TABLE AS ss_new_lines
  FOR EACH STATEMENT EXECUTE FUNCTION ss_search_lines_added();

CREATE FUNCTION ss_search_lines_removed () RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM ss_search s USING ss_old_lines o WHERE s.tenant = o.tenant AND s.session = o.session AND s.pos = o.pos;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER ss_lines_search_removed AFTER DELETE ON ss_lines REFERENCING OLD TABLE AS ss_old_lines
  FOR EACH STATEMENT EXECUTE FUNCTION ss_search_lines_removed();

CREATE FUNCTION ss_search_head_changed () RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO ss_search_queue (tenant, session, pos) VALUES (NEW.tenant, NEW.id, 0);
  RETURN NULL;
END
$fn$;
CREATE TRIGGER ss_sessions_search_head AFTER INSERT OR UPDATE OF head ON ss_sessions
  FOR EACH ROW EXECUTE FUNCTION ss_search_head_changed();

-- Sessions stored before this migration: every line and head waits to be indexed.
INSERT INTO ss_search_queue (tenant, session, pos) SELECT tenant, id, 0 FROM ss_sessions;
INSERT INTO ss_search_queue (tenant, session, pos) SELECT tenant, session, pos FROM ss_lines;
`,
  },
]
