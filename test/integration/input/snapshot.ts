// What is in a test schema: every table (so a dropped one shows) with its row count. Compared before and after a
// rejected call to prove that nothing was written.
import type pg from 'pg'

export async function snapshot(pool: pg.Pool, schema: string): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
    [schema],
  )
  const out: Record<string, number> = {}
  for (const { name } of rows) {
    const res = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}"."${name}"`)
    out[name] = res.rows[0].n
  }
  return out
}
