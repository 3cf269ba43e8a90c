/**
 * Migrations of the group commit's statement (`ss_append_files`, first made by migration 6 in
 * schema.ts), kept apart from the tables' so that each file stays readable.
 */
import type { Migration } from './migration.js'

export const APPEND_MIGRATIONS: readonly Migration[] = [
  {
    version: 8,
    name: 'ss_append_files reads rows by their key only',
    // The same arguments and answers as migration 6; the work now follows the appends, not the
    // session or the store. Migration 6 left each join to the planner, and the one plan a
    // connection keeps for the statement (made for arrays of any length) could hash every
    // entry of a session to look for an append's ids, or scan every session row to lock a
    // group's: an append cost more the longer its session and the larger the store. Here every
    // read is one lookup by a table's full key, in a loop:
    // - the group's session rows are locked one by one in (tenant, id) order, so that groups of
    //   several servers never deadlock;
    // - then each append in turn is judged on its own ('missing', 'stale', else its lines are
    //   inserted, numbered after its session's entry_count) and, unless one of its ids is taken
    //   ('duplicate': the unique (tenant, session, id) key itself finds it, whatever the plan,
    //   and the append's rows are removed again), its row updated (one new version, migration
    //   4) and announced.
    // A connection plans these statements once, maybe while the tables are still nearly empty,
    // when a sequential scan looks cheapest and stays in the plan as they grow: with sequential
    // scans off, each lookup keeps an index of its key.
    sql: `
CREATE OR REPLACE FUNCTION ss_append_files (p_tenants text[], p_ids text[], p_expect bigint[], p_mtimes timestamptz[],
  p_counts integer[], p_line_item integer[], p_line_pos integer[], p_entry_ids text[], p_lines text[])
RETURNS TABLE (item integer, status text, version bigint, born bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
DECLARE
  k record; v_t text; v_s text; v_n integer; v_rows integer; v_off integer := 0; v_count bigint; v_version bigint;
BEGIN
  FOR k IN SELECT DISTINCT u.t, u.i FROM unnest(p_tenants, p_ids) AS u (t, i) ORDER BY u.t, u.i LOOP
    PERFORM 1 FROM ss_sessions s WHERE s.tenant = k.t AND s.id = k.i FOR UPDATE;
  END LOOP;
  FOR i IN 1..coalesce(array_length(p_counts, 1), 0) LOOP
    v_t := p_tenants[i]; v_s := p_ids[i]; v_n := p_counts[i];
    item := i; version := NULL; born := NULL;
    SELECT s.entry_count, s.version INTO v_count, v_version FROM ss_sessions s WHERE s.tenant = v_t AND s.id = v_s;
    IF NOT FOUND THEN
      status := 'missing';
    ELSIF p_expect[i] IS NOT NULL AND p_expect[i] <> v_version THEN
      status := 'stale';
    ELSE
      status := 'ok';
      IF v_n > 0 THEN
        INSERT INTO ss_entries (tenant, session, seq, id, line)
          SELECT v_t, v_s, v_count + l.p, l.d, l.l
          FROM unnest(p_line_pos[v_off + 1 : v_off + v_n], p_entry_ids[v_off + 1 : v_off + v_n], p_lines[v_off + 1 : v_off + v_n]) AS l (p, d, l)
          ON CONFLICT (tenant, session, id) DO NOTHING;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        IF v_rows <> v_n THEN -- an id the session holds, or one id twice: none of its lines stays
          DELETE FROM ss_entries e WHERE e.tenant = v_t AND e.session = v_s AND e.seq > v_count;
          status := 'duplicate';
        END IF;
      END IF;
    END IF;
    IF status = 'ok' THEN
      UPDATE ss_sessions s SET revision = s.revision + 1, entry_count = s.entry_count + v_n, unsaved = false, modified_at = p_mtimes[i]
        WHERE s.tenant = v_t AND s.id = v_s
        RETURNING s.entry_count, s.version, s.born INTO v_count, version, born;
      PERFORM pg_notify('ss_entries', json_build_array(v_t, v_s, v_count)::text);
    END IF;
    v_off := v_off + v_n;
    RETURN NEXT;
  END LOOP;
END
$fn$;
`,
  },
]
