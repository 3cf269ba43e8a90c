/**
 * Migrations of the group commit's statement (`ss_append_files`, first made by migration 6 in
 * schema.ts), kept apart from the tables' so that each file stays readable.
 */
import type { Migration } from './schema.js'

export const APPEND_MIGRATIONS: readonly Migration[] = [
  {
    version: 7,
    name: 'ss_append_files reads only the rows of its appends',
    // The same statement, arguments and answers as migration 6, with every read of a table made
    // by its full key, one row at a time (a LATERAL subquery that cannot be merged into a join:
    // it locks or has a LIMIT). Migration 6 let the planner choose, and the plan it keeps for a
    // connection (made once, for arrays of any length) joined each append's ids to every entry
    // of its session (hashing them all) and its sessions to every session row: the cost of an
    // append grew with the session and with the store, not with the append.
    // Rows are still locked in (tenant, id) order, so that groups of several servers never deadlock.
    sql: `
CREATE OR REPLACE FUNCTION ss_append_files (p_tenants text[], p_ids text[], p_expect bigint[], p_mtimes timestamptz[],
  p_counts integer[], p_line_item integer[], p_line_pos integer[], p_entry_ids text[], p_lines text[])
RETURNS TABLE (item integer, status text, version bigint, born bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  r record; v_taken integer[];
BEGIN
  PERFORM 1 FROM (SELECT DISTINCT u.t, u.i FROM unnest(p_tenants, p_ids) AS u (t, i) ORDER BY u.t, u.i) AS k
    CROSS JOIN LATERAL (SELECT 1 FROM ss_sessions s WHERE s.tenant = k.t AND s.id = k.i FOR UPDATE) AS locked;
  SELECT coalesce(array_agg(DISTINCT l.o), '{}') INTO v_taken
    FROM unnest(p_line_item, p_entry_ids) AS l (o, d)
    CROSS JOIN LATERAL (SELECT 1 FROM ss_entries e WHERE e.tenant = p_tenants[l.o] AND e.session = p_ids[l.o] AND e.id = l.d LIMIT 1) AS taken;
  FOR r IN
    WITH items AS (
      SELECT u.o::integer AS o, u.t, u.i, u.x, u.m, u.n FROM unnest(p_tenants, p_ids, p_expect, p_mtimes, p_counts) WITH ORDINALITY AS u (t, i, x, m, n, o)
    ), lines AS (
      SELECT l.o, l.p, l.d, l.l FROM unnest(p_line_item, p_line_pos, p_entry_ids, p_lines) AS l (o, p, d, l)
    ), judged AS (
      SELECT it.o, it.t, it.i, it.m, it.n, s.entry_count AS c,
        CASE WHEN s.id IS NULL THEN 'missing' WHEN it.x IS NOT NULL AND it.x <> s.version THEN 'stale'
          WHEN it.o = ANY (v_taken) THEN 'duplicate' ELSE 'ok' END AS st
      FROM items it LEFT JOIN LATERAL (
        SELECT s.id, s.entry_count, s.version FROM ss_sessions s WHERE s.tenant = it.t AND s.id = it.i LIMIT 1
      ) AS s ON true
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
]
