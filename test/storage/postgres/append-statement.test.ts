/**
 * The work of the group commit's statement (`ss_append_files`) follows the append, not the
 * session: the plans the database ran for an append to a long session, as `auto_explain` reports
 * them, read no more entry rows than the append has ids.
 */
import { join } from 'node:path'
import type pg from 'pg'
import { describe, expect, it } from 'vitest'
import { PgSessionStorage } from '../../../src/storage/postgres/pg-session-storage.js'
import { pgAvailable, useMigratedDatabase } from '../../helpers/pg.js'
import { header } from './pg-context.js'

const entry = (id: string): string => JSON.stringify({ type: 'message', id, parentId: null, message: { role: 'user', content: id } })

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Actual Rows'?: number
  'Actual Loops'?: number
  'Rows Removed by Filter'?: number
  Plans?: PlanNode[]
}

/** Rows the scans of `plan` read from `table` (returned or filtered out, over every loop). */
function rowsRead (plan: PlanNode, table: string): number {
  const own = plan['Relation Name'] === table && plan['Node Type'] !== 'ModifyTable'
    ? ((plan['Actual Rows'] ?? 0) + (plan['Rows Removed by Filter'] ?? 0)) * (plan['Actual Loops'] ?? 1)
    : 0
  return own + (plan.Plans ?? []).reduce((n, p) => n + rowsRead(p, table), 0)
}

/** Turns on `auto_explain` for every statement, nested ones too, on the pool's one connection. */
async function explainEverything (pool: pg.Pool, plans: PlanNode[]): Promise<void> {
  const client = await pool.connect()
  client.on('notice', (notice: { message?: string }) => {
    const json = notice.message?.slice(notice.message.indexOf('{'))
    if (json !== undefined && notice.message?.includes('"Plan"') === true) plans.push((JSON.parse(json) as { Plan: PlanNode }).Plan)
  })
  try {
    await client.query("LOAD 'auto_explain'")
    await client.query(`SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off;
      SET auto_explain.log_nested_statements = on; SET auto_explain.log_format = json; SET auto_explain.log_level = notice`)
  } finally {
    client.release()
  }
}

describe.runIf(pgAvailable)('ss_append_files', () => {
  const database = useMigratedDatabase(1)

  it('reads only the entry rows of the ids it appends, however long the session', async () => {
    const dataDir = '/pg-append-statement'
    const path = join(dataDir, 'sessions', '--w--', 'long.jsonl')
    const s = await PgSessionStorage.open(database.pool, { dataDir })
    await s.writeText(path, `${header('long')}\n${entry('e0')}\n`)
    const w = s.openWriter(path, { flags: 'a' })
    await w.writeLine(`${entry('e1')}\n`) // the connection plans the statement while the session is short
    await w.writeLine(Array.from({ length: 400 }, (_, i) => `${entry(`f${i}`)}\n`).join(''))

    const plans: PlanNode[] = []
    await explainEverything(database.pool, plans)
    await w.writeLine(`${entry('g1')}\n${entry('g2')}\n`)
    await w.close()

    expect(plans.length).toBeGreaterThan(0)
    expect(plans.reduce((n, p) => n + rowsRead(p, 'ss_entries'), 0)).toBeLessThanOrEqual(2)
    const { rows } = await database.pool.query<{ n: string }>("SELECT count(*) AS n FROM ss_entries WHERE session = 'long'")
    expect(Number(rows[0]?.n)).toBe(404)
  })
})
