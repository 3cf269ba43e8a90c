/**
 * Migration 9: PostgreSQL as the session log itself, no longer a file system. A session is one
 * `ss_sessions` row (its head: the header line, behind an agent's title line; its listing facts;
 * its version) and its later lines in `ss_lines`, each kept exactly, so the head and the lines in
 * order give the session's text back byte for byte. Answers to idempotent appends commit in the
 * append's own transaction (`ss_answers`). Every change takes a new version from `ss_version` and
 * notifies `ss_changes` with `[tenant, id, version, kind, origin]`.
 *
 * Text a client sent is kept inside JSON (lines, `info`, `recent`) or as a JSON string (`cwd`):
 * JSON escapes NUL and lone surrogates, which a `text` column cannot hold, so nothing is changed
 * on the way in. Keyset listings sort ids byte-wise (`COLLATE "C"`), as the disk index does.
 *
 * Rows of the file layout of migrations 3–8 are moved over: sessions with their lines (their
 * listing facts are computed by the server at its first start, pg-upgrade.ts), and the other
 * files kept aside in `ss_legacy_files` until then.
 */
import type { Migration } from './migration.js'

/**
 * The group commit of a server: appends to any number of sessions in one statement (one
 * transaction, one round trip). Session rows are locked in (tenant, id) order, so groups of
 * several servers never deadlock; then each append is judged on its own: 'missing' (no row),
 * 'stale' (the row moved past the version the append expects), 'answered' (a key of it has an
 * answer: `answered` holds them as JSON `[[key, bodyHash, answer], …]`), else its lines are
 * numbered after the row's, its answers kept, its row updated with a new version and the change
 * notified ('ok'). A refused append never fails the others. Plans stay generic and on indexes:
 * a plan made while the tables were small must not scan them once they are large.
 */
const APPEND_FUNCTION = `
CREATE FUNCTION ss_journal_append (p_tenants text[], p_ids text[], p_expect bigint[], p_save boolean[],
  p_info text[], p_modified double precision[], p_cwd text[], p_messages integer[], p_recent text[], p_bytes bigint[],
  p_counts integer[], p_lines text[], p_key_items integer[], p_keys text[], p_hashes text[], p_answers text[], p_origin text)
RETURNS TABLE (item integer, status text, version bigint, answered text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
DECLARE
  k record; v_off integer := 0; v_n integer; v_version bigint; v_lines integer;
BEGIN
  FOR k IN SELECT DISTINCT u.t, u.i FROM unnest(p_tenants, p_ids) AS u (t, i) ORDER BY u.t, u.i LOOP
    PERFORM 1 FROM ss_sessions s WHERE s.tenant = k.t AND s.id = k.i FOR UPDATE;
  END LOOP;
  FOR i IN 1..coalesce(array_length(p_counts, 1), 0) LOOP
    v_n := p_counts[i]; item := i; version := NULL; answered := NULL;
    SELECT s.version, s.lines INTO v_version, v_lines FROM ss_sessions s WHERE s.tenant = p_tenants[i] AND s.id = p_ids[i];
    IF NOT FOUND THEN
      status := 'missing';
    ELSIF v_version <> p_expect[i] THEN
      status := 'stale';
    ELSE
      SELECT json_agg(json_build_array(a.key, a.body_hash, a.answer))::text INTO answered
        FROM unnest(p_key_items, p_keys) AS q (it, ky)
        JOIN ss_answers a ON a.tenant = p_tenants[i] AND a.session = p_ids[i] AND a.key = q.ky
        WHERE q.it = i AND a.expires_at > now();
      IF answered IS NOT NULL THEN
        status := 'answered';
      ELSE
        INSERT INTO ss_lines (tenant, session, pos, line)
          SELECT p_tenants[i], p_ids[i], v_lines + l.o, l.line
          FROM unnest(p_lines[v_off + 1 : v_off + v_n]) WITH ORDINALITY AS l (line, o);
        INSERT INTO ss_answers (tenant, session, key, body_hash, answer, expires_at)
          SELECT p_tenants[i], p_ids[i], q.ky, q.h, q.a, now() + interval '1 day'
          FROM unnest(p_key_items, p_keys, p_hashes, p_answers) AS q (it, ky, h, a) WHERE q.it = i
          ON CONFLICT (tenant, session, key) DO UPDATE
            SET body_hash = excluded.body_hash, answer = excluded.answer, expires_at = excluded.expires_at;
        UPDATE ss_sessions s SET version = nextval('ss_version'), lines = s.lines + v_n, torn = false,
            saved = s.saved OR p_save[i], info = p_info[i], modified = p_modified[i], cwd = p_cwd[i],
            messages = p_messages[i], recent = coalesce(p_recent[i], s.recent), size = s.size + p_bytes[i]
          WHERE s.tenant = p_tenants[i] AND s.id = p_ids[i]
          RETURNING s.version INTO version;
        PERFORM pg_notify('ss_changes', json_build_array(p_tenants[i], p_ids[i], version, 'appended', p_origin)::text);
        status := 'ok';
      END IF;
    END IF;
    v_off := v_off + v_n;
    RETURN NEXT;
  END LOOP;
END
$fn$;
`

export const LOG_MIGRATIONS: readonly Migration[] = [
  {
    version: 9,
    name: 'sessions as a log: rows of lines, answers in the append transaction, change notifications',
    sql: `
DROP TRIGGER ss_sessions_changed ON ss_sessions;
DROP TRIGGER ss_files_changed ON ss_files;
DROP FUNCTION ss_file_changed ();
DROP FUNCTION ss_append (text, text, integer[], bigint[], boolean[], text[], boolean[], text[], text[]);
DROP FUNCTION ss_append_files (text[], text[], bigint[], timestamptz[], integer[], integer[], integer[], text[], text[]);
ALTER TABLE ss_sessions RENAME TO ss_legacy_sessions;
ALTER INDEX ss_sessions_pkey RENAME TO ss_legacy_sessions_pkey;
DROP INDEX ss_sessions_listing;
DROP INDEX ss_sessions_unsaved;
DROP INDEX ss_sessions_path;
ALTER TABLE ss_entries RENAME TO ss_legacy_entries;
ALTER TABLE ss_files RENAME TO ss_legacy_files;
DROP TABLE ss_idempotency_keys;
DROP TABLE ss_breadcrumbs;

CREATE TABLE ss_sessions (
  tenant        text             NOT NULL,
  id            text COLLATE "C" NOT NULL,
  head          text             NOT NULL,
  lines         integer          NOT NULL DEFAULT 0,
  torn          boolean          NOT NULL DEFAULT false,
  saved         boolean          NOT NULL,
  version       bigint           NOT NULL,
  reset_version bigint           NOT NULL,
  modified      double precision NOT NULL,
  cwd           text             NOT NULL,
  messages      integer          NOT NULL DEFAULT 0,
  info          text,
  recent        text,
  size          bigint           NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX ss_sessions_listing ON ss_sessions (tenant, modified DESC, id);
CREATE INDEX ss_sessions_cwd ON ss_sessions (tenant, cwd, modified DESC, id);
CREATE INDEX ss_sessions_unsaved ON ss_sessions (modified) WHERE NOT saved;

CREATE TABLE ss_lines (
  tenant   text    NOT NULL,
  session  text COLLATE "C" NOT NULL,
  pos      integer NOT NULL,
  line     text    NOT NULL,
  PRIMARY KEY (tenant, session, pos),
  FOREIGN KEY (tenant, session) REFERENCES ss_sessions (tenant, id) ON DELETE CASCADE
);

CREATE TABLE ss_answers (
  tenant     text        NOT NULL,
  session    text COLLATE "C" NOT NULL,
  key        text        NOT NULL,
  body_hash  text        NOT NULL,
  answer     text        NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant, session, key),
  FOREIGN KEY (tenant, session) REFERENCES ss_sessions (tenant, id) ON DELETE CASCADE
);
CREATE INDEX ss_answers_expiry ON ss_answers (expires_at);

CREATE TABLE ss_breadcrumbs (
  tenant      text NOT NULL,
  terminal_id text NOT NULL,
  cwd         text NOT NULL,
  session     text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant, terminal_id)
);

INSERT INTO ss_sessions (tenant, id, head, lines, saved, version, reset_version, modified, cwd)
  SELECT s.tenant, s.id, s.header || E'\\n', s.entry_count, NOT s.unsaved, nextval('ss_version'), 0,
    extract(epoch FROM s.modified_at) * 1000, to_json(s.cwd)::text
  FROM ss_legacy_sessions s WHERE s.path IS NOT NULL OR s.unsaved;
UPDATE ss_sessions SET reset_version = version;
INSERT INTO ss_lines (tenant, session, pos, line)
  SELECT e.tenant, e.session, e.seq, e.line FROM ss_legacy_entries e
  JOIN ss_sessions s ON s.tenant = e.tenant AND s.id = e.session;
DROP TABLE ss_legacy_entries;

${APPEND_FUNCTION}
`,
  },
]
