import type { Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'

/** Whether the tables this library needs (V001 and V002) exist in the configured schema. */
export async function schemaIsReady(db: Queryable, t: Tables): Promise<boolean> {
  const res = await db.query<{ topic: string | null; seq: string | null; lease: string | null }>(
    `SELECT to_regclass($1) AS topic, to_regclass($2) AS seq, to_regclass($3) AS lease`,
    [t.topic, t.partitionSeq, t.partitionLease],
  )
  const row = res.rows[0]
  return row.topic !== null && row.seq !== null && row.lease !== null
}
