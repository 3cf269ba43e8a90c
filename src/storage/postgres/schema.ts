/**
 * The PostgreSQL schema of `STORAGE=postgres`, as numbered migrations. A migration, once
 * released, never changes (the runner refuses a database whose applied migration differs from
 * the one here); a change is a new migration with the next number.
 *
 * Migrations 1–8 are the history of a layout that kept session files as rows; they run on a new
 * database as they did, and migration 9 (schema-log.ts) turns what they made into the tables of
 * today: sessions as rows of lines, keyed by tenant first. Their comments describe the layout of
 * their time.
 */
import type { Migration } from './migration.js'
import { APPEND_MIGRATIONS } from './schema-appends.js'
import { HYGIENE_MIGRATIONS } from './schema-hygiene.js'
import { LOG_MIGRATIONS } from './schema-log.js'
import { SEARCH_DRAIN_MIGRATIONS } from './schema-search-drain.js'
import { SEARCH_MIGRATIONS } from './schema-search.js'

export type { Migration }

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, entries, idempotency keys, blobs, terminal breadcrumbs',
    sql: `
CREATE TABLE ss_sessions (
  tenant       text        NOT NULL,
  id           text        NOT NULL,
  cwd          text        NOT NULL,
  header       text        NOT NULL,
  title        text,
  leaf_id      text,
  revision     bigint      NOT NULL DEFAULT 0,
  entry_count  bigint      NOT NULL DEFAULT 0,
  unsaved      boolean     NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  modified_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, id)
);
CREATE INDEX ss_sessions_listing ON ss_sessions (tenant, cwd, modified_at DESC) WHERE NOT unsaved;
CREATE INDEX ss_sessions_unsaved ON ss_sessions (modified_at) WHERE unsaved;

CREATE TABLE ss_entries (
  tenant       text        NOT NULL,
  session      text        NOT NULL,
  seq          bigint      NOT NULL,
  id           text        NOT NULL,
  line         text        NOT NULL,
  committed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant, session, seq),
  UNIQUE (tenant, session, id),
  FOREIGN KEY (tenant, session) REFERENCES ss_sessions (tenant, id) ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE ss_idempotency_keys (
  tenant       text        NOT NULL,
  session      text        NOT NULL,
  key          text        NOT NULL,
  body_hash    text        NOT NULL,
  response     jsonb       NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant, session, key),
  FOREIGN KEY (tenant, session) REFERENCES ss_sessions (tenant, id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX ss_idempotency_keys_expiry ON ss_idempotency_keys (expires_at);

CREATE TABLE ss_blobs (
  tenant       text        NOT NULL,
  hash         text        NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  media_type   text        NOT NULL,
  size         bigint      NOT NULL,
  data         bytea       NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, hash)
);

CREATE TABLE ss_breadcrumbs (
  tenant       text        NOT NULL,
  terminal_id  text        NOT NULL,
  session      text        NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, terminal_id)
);
`,
  },
  {
    version: 2,
    name: 'ss_append: a group of appends to one session in one statement',
    // One round trip per group commit: lock the session row, refuse each append whose expected
    // revision is stale or whose ids the session has (ids repeated within one append are refused
    // before they are sent), number the rest after entry_count, insert
    // them, bump the row, notify. The statement is its own transaction.
    sql: `
CREATE FUNCTION ss_append (p_tenant text, p_session text, p_counts integer[], p_expect bigint[],
  p_leaf_set boolean[], p_leaf text[], p_save boolean[], p_ids text[], p_lines text[])
RETURNS TABLE (status text, first_seq bigint, last_seq bigint, new_revision bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_rev bigint; v_rev0 bigint; v_count bigint; v_leaf text; v_save boolean := false;
  v_taken text[]; v_ids text[]; v_n integer; v_off integer := 0;
  v_seqs bigint[] := '{}'; v_ok_ids text[] := '{}'; v_ok_lines text[] := '{}';
BEGIN
  SELECT s.revision, s.entry_count, s.leaf_id INTO v_rev, v_count, v_leaf
    FROM ss_sessions s WHERE s.tenant = p_tenant AND s.id = p_session FOR UPDATE;
  IF NOT FOUND THEN
    FOR i IN 1..coalesce(array_length(p_counts, 1), 0) LOOP
      status := 'not_found'; first_seq := NULL; last_seq := NULL; new_revision := NULL; RETURN NEXT;
    END LOOP;
    RETURN;
  END IF;
  v_rev0 := v_rev;
  SELECT coalesce(array_agg(e.id), '{}') INTO v_taken FROM unnest(p_ids) AS u (id)
    JOIN ss_entries e ON e.tenant = p_tenant AND e.session = p_session AND e.id = u.id;
  FOR i IN 1..coalesce(array_length(p_counts, 1), 0) LOOP
    v_n := p_counts[i];
    v_ids := coalesce(p_ids[v_off + 1 : v_off + v_n], '{}');
    first_seq := NULL; last_seq := NULL;
    IF p_expect[i] IS NOT NULL AND p_expect[i] <> v_rev THEN
      status := 'stale'; new_revision := v_rev;
    ELSIF v_ids && v_taken THEN
      status := 'duplicate'; new_revision := v_rev;
    ELSE
      first_seq := v_count + 1;
      v_seqs := v_seqs || ARRAY(SELECT generate_series(v_count + 1, v_count + v_n));
      v_ok_ids := v_ok_ids || v_ids;
      v_ok_lines := v_ok_lines || p_lines[v_off + 1 : v_off + v_n];
      v_taken := v_taken || v_ids;
      v_count := v_count + v_n;
      IF p_leaf_set[i] THEN v_leaf := p_leaf[i]; END IF;
      IF p_save[i] THEN v_save := true; END IF;
      v_rev := v_rev + 1;
      status := 'ok'; last_seq := v_count; new_revision := v_rev;
    END IF;
    RETURN NEXT;
    v_off := v_off + v_n;
  END LOOP;
  IF coalesce(array_length(v_seqs, 1), 0) > 0 THEN
    INSERT INTO ss_entries (tenant, session, seq, id, line)
      SELECT p_tenant, p_session, t.s, t.d, t.l FROM unnest(v_seqs, v_ok_ids, v_ok_lines) AS t (s, d, l);
    PERFORM pg_notify('ss_entries', json_build_array(p_tenant, p_session, v_count)::text);
  END IF;
  IF v_rev <> v_rev0 THEN
    UPDATE ss_sessions s SET revision = v_rev, entry_count = v_count, leaf_id = v_leaf,
      unsaved = s.unsaved AND NOT v_save, modified_at = clock_timestamp()
      WHERE s.tenant = p_tenant AND s.id = p_session;
  END IF;
END
$fn$;
`,
  },
  {
    version: 3,
    name: 'files of the session storage: session paths, other files',
    // `PgSessionStorage` keeps DATA_DIR's files here, by path relative to DATA_DIR: a session
    // file as its ss_sessions row (path set) with its entries, any other file (breadcrumbs,
    // temp files of a rewrite, set-aside files) whole in ss_files.
    sql: `
ALTER TABLE ss_sessions ADD COLUMN path text;
CREATE UNIQUE INDEX ss_sessions_path ON ss_sessions (path);

CREATE TABLE ss_files (
  path         text        PRIMARY KEY,
  content      bytea       NOT NULL,
  modified_at  timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 4,
    name: 'file versions and change notifications, for several servers on one database',
    // Every insert or update of a stored file (a session row or an ss_files row) takes a new
    // `version` from one sequence, so a version never comes back (a rewrite that restores the
    // same text still has a new one); `born` is the version a row was inserted with (a rewrite
    // inserts a new row, a rename keeps it). Every change of a row that has a path notifies
    // `ss_files` with only `[schema, path, version]` (`null` once nothing is at the path), so
    // that each server on the schema re-reads what changed into its catalog.
    sql: `
CREATE SEQUENCE ss_version;
ALTER TABLE ss_sessions ADD COLUMN version bigint NOT NULL DEFAULT 0, ADD COLUMN born bigint NOT NULL DEFAULT 0;
ALTER TABLE ss_files ADD COLUMN version bigint NOT NULL DEFAULT 0, ADD COLUMN born bigint NOT NULL DEFAULT 0;
UPDATE ss_sessions SET version = nextval('ss_version');
UPDATE ss_sessions SET born = version;
UPDATE ss_files SET version = nextval('ss_version');
UPDATE ss_files SET born = version;

CREATE FUNCTION ss_file_changed () RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.version := nextval('ss_version'); NEW.born := NEW.version;
  ELSIF TG_OP = 'UPDATE' THEN
    NEW.version := nextval('ss_version'); NEW.born := OLD.born;
  END IF;
  IF TG_OP <> 'INSERT' AND OLD.path IS NOT NULL AND (TG_OP = 'DELETE' OR NEW.path IS DISTINCT FROM OLD.path) THEN
    PERFORM pg_notify('ss_files', json_build_array(current_schema(), OLD.path, NULL)::text);
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.path IS NOT NULL THEN
    PERFORM pg_notify('ss_files', json_build_array(current_schema(), NEW.path, NEW.version)::text);
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END
$fn$;
CREATE TRIGGER ss_sessions_changed BEFORE INSERT OR UPDATE OR DELETE ON ss_sessions
  FOR EACH ROW EXECUTE FUNCTION ss_file_changed();
CREATE TRIGGER ss_files_changed BEFORE INSERT OR UPDATE OR DELETE ON ss_files
  FOR EACH ROW EXECUTE FUNCTION ss_file_changed();
`,
  },
  {
    version: 5,
    name: 'unsaved sessions and idempotency keys shared by several servers',
    // A session without an assistant message yet (SPEC.md §8.3) has no file: it is a session
    // row with no `path`, `unsaved` set, its future file's path in `unsaved_path`, and its
    // entries; storing its file later replaces the row. An idempotency key outlives the rewrite
    // of its session (a rewrite inserts a new session row), so it no longer cascades from one.
    sql: `
ALTER TABLE ss_sessions ADD COLUMN unsaved_path text;
ALTER TABLE ss_idempotency_keys DROP CONSTRAINT ss_idempotency_keys_tenant_session_fkey;
`,
  },
  {
    version: 6,
    name: 'ss_append_files: appends to many session files in one statement',
    // The group commit of a server: appends to any number of sessions, each numbered after its
    // own entry_count, in one statement (so one transaction and one round trip). The session
    // rows are locked first, all in (tenant, id) order, so that groups of several servers never
    // deadlock. Then each append is judged on its own: 'missing' (no row), 'stale' (its
    // expected version is not the row's), 'duplicate' (the session has one of its ids), else
    // 'ok'; only the 'ok' ones are inserted and their rows updated (one new version each,
    // migration 4), so a refused append never fails the others. The entry lines are the
    // appends' in order; a line names its append (1-based, in the order of the session arrays)
    // and its place in it. The ids of each append are looked up in a statement of their own,
    // with its session as parameters, as ss_append does: joined to the appends' table, the
    // planner may scan the session's every entry for each new one. Its statements keep one
    // plan, made for arrays of any length: one planned for a group's actual arrays (the first
    // calls of a connection) took seconds on a group of 10,000 entries.
    sql: `
CREATE FUNCTION ss_append_files (p_tenants text[], p_ids text[], p_expect bigint[], p_mtimes timestamptz[],
  p_counts integer[], p_line_item integer[], p_line_pos integer[], p_entry_ids text[], p_lines text[])
RETURNS TABLE (item integer, status text, version bigint, born bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  r record; v_taken integer[] := '{}'; v_off integer := 0; v_n integer;
BEGIN
  PERFORM 1 FROM ss_sessions s JOIN unnest(p_tenants, p_ids) AS u (t, i) ON s.tenant = u.t AND s.id = u.i
    ORDER BY s.tenant, s.id FOR UPDATE OF s;
  FOR i IN 1..coalesce(array_length(p_counts, 1), 0) LOOP
    v_n := p_counts[i];
    IF v_n > 0 AND EXISTS (SELECT 1 FROM unnest(p_entry_ids[v_off + 1 : v_off + v_n]) AS u (d)
        JOIN ss_entries e ON e.tenant = p_tenants[i] AND e.session = p_ids[i] AND e.id = u.d) THEN
      v_taken := v_taken || i;
    END IF;
    v_off := v_off + v_n;
  END LOOP;
  FOR r IN
    WITH items AS (
      SELECT u.o::integer AS o, u.t, u.i, u.x, u.m, u.n FROM unnest(p_tenants, p_ids, p_expect, p_mtimes, p_counts) WITH ORDINALITY AS u (t, i, x, m, n, o)
    ), lines AS (
      SELECT l.o, l.p, l.d, l.l FROM unnest(p_line_item, p_line_pos, p_entry_ids, p_lines) AS l (o, p, d, l)
    ), judged AS (
      SELECT it.o, it.t, it.i, it.m, it.n, s.entry_count AS c,
        CASE WHEN s.id IS NULL THEN 'missing' WHEN it.x IS NOT NULL AND it.x <> s.version THEN 'stale'
          WHEN it.o = ANY (v_taken) THEN 'duplicate' ELSE 'ok' END AS st
      FROM items it LEFT JOIN ss_sessions s ON s.tenant = it.t AND s.id = it.i
    ), inserted AS (
      INSERT INTO ss_entries (tenant, session, seq, id, line)
      SELECT j.t, j.i, j.c + l.p, l.d, l.l FROM judged j JOIN lines l ON l.o = j.o WHERE j.st = 'ok'
    ), updated AS (
      UPDATE ss_sessions s SET revision = s.revision + 1, entry_count = s.entry_count + j.n, unsaved = false, modified_at = j.m
      FROM judged j WHERE j.st = 'ok' AND s.tenant = j.t AND s.id = j.i
      RETURNING j.o, s.tenant, s.id, s.entry_count, s.version, s.born
    )
    SELECT j.o, j.st, u.tenant, u.id, u.entry_count, u.version, u.born FROM judged j LEFT JOIN updated u ON u.o = j.o ORDER BY j.o
  LOOP
    IF r.st = 'ok' THEN
      PERFORM pg_notify('ss_entries', json_build_array(r.tenant, r.id, r.entry_count)::text);
    END IF;
    item := r.o; status := r.st; version := r.version; born := r.born;
    RETURN NEXT;
  END LOOP;
END
$fn$;
`,
  },
  {
    version: 7,
    name: 'idempotency keys claimed before their append',
    // An append with an Idempotency-Key first claims the key: a row without a response, naming
    // the attempt that holds it (`owner`) and when that attempt last said it still works on it
    // (`claimed_at`). Its answer then takes the claim's place (`response` set, `owner` cleared).
    // Another attempt with the key waits for that answer instead of appending too, and takes the
    // claim over only once it has gone unrenewed for long enough (its server died).
    sql: `
ALTER TABLE ss_idempotency_keys ALTER COLUMN response DROP NOT NULL,
  ADD COLUMN owner text, ADD COLUMN claimed_at timestamptz;
`,
  },
  ...APPEND_MIGRATIONS,
  ...LOG_MIGRATIONS,
  ...SEARCH_MIGRATIONS,
  ...HYGIENE_MIGRATIONS,
  ...SEARCH_DRAIN_MIGRATIONS,
]
