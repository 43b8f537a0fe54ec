import type { Queryable } from '../db/database.js'
import { quoteIdent } from '../db/identifiers.js'
import type { Tables } from '../db/tables.js'

/** Creates the message partition for now and the premade ones (function from R__partition_functions.sql). */
export async function ensurePartitions(db: Queryable, t: Tables): Promise<number> {
  const fn = `${quoteIdent(t.schema)}.${quoteIdent(`${t.prefix}_ensure_partitions`)}`
  const res = await db.query<{ made: number }>(`SELECT ${fn}() AS made`)
  return res.rows[0].made
}
