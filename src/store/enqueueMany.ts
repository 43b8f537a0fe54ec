import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { quoteIdent } from '../db/identifiers.js'
import { integerArray } from './arrayLiterals.js'
import { FLAG_FROM_LEDGER, MESSAGE_INSERT_COLUMNS, messageColumns, type StoredMessage } from './enqueue.js'
import { statements } from './statement.js'

// A send over several partitions as ONE statement (docs/decisions/write-011): allocate_partitions takes the
// partitions' locks in the given (topic_id, partition_id) order and their seq ranges, then every row goes in with one
// INSERT, each row finding its partition and range through its group index ($23). The row parameters are those of
// enqueue.ts ($4..$13, $15..$21); $1..$3 are per partition: topic ids, partition ids, row counts; $22 is each
// partition's first row (1-based, rows are grouped by partition in the given order). One notification per topic.
const sql = statements('enqueueMany', (t) => {
  const allocate = `${quoteIdent(t.schema)}.${quoteIdent(`${t.prefix}_allocate_partitions`)}`
  return {
    enqueue: `
    WITH a AS (
      SELECT x.first_seqs, x.low_seqs FROM ${allocate}($1::int8[], $2::int4[], $3::int8[]) x
    ), ins AS (
      INSERT INTO ${t.message} (${MESSAGE_INSERT_COLUMNS})
      SELECT ($1::int8[])[r.grp], ($2::int4[])[r.grp], COALESCE(r.routing_key, $15), a.first_seqs[r.grp] + r.ord - ($22::int4[])[r.grp],
             COALESCE(r.priority, $16::int2), substring($8::bytea FROM r.off FOR r.len), COALESCE(r.compression, $17::int2),
             COALESCE(r.headers, $18)::jsonb, COALESCE(r.flags, $19::int2) | ${FLAG_FROM_LEDGER}, COALESCE(r.message_key, $20::bytea),
             COALESCE(r.ts, $21::int8)
      FROM a, unnest($4::text[], $5::bytea[], $6::int2[], $7::int2[], $9::int4[], $10::int4[], $11::int2[], $12::text[], $13::int8[], $23::int4[])
             WITH ORDINALITY AS r(routing_key, message_key, flags, priority, off, len, compression, headers, ts, grp, ord)
    )
    SELECT a.first_seqs::text[] AS first_seqs, a.low_seqs::text[] AS low_seqs,
           (extract(epoch FROM now()) * 1000)::int8::text AS append_ms,
           (SELECT count(pg_notify($14, d.t::text)) FROM (SELECT DISTINCT unnest($1::int8[]) AS t) d) AS notified
    FROM a`,
  }
})

export interface PartitionRows {
  topicId: string
  partition: number
  messages: StoredMessage[]
}

export interface ManyResult {
  /** per partition, in the given order */
  firstSeqs: string[]
  lowSeqs: Array<string | null>
  appendTimeMs: string
}

/** Writes every partition's rows in one statement; `parts` in (topic id, partition) order, each partition once. */
export async function enqueuePartitions(db: Queryable, t: Tables, parts: readonly PartitionRows[]): Promise<ManyResult> {
  const rows: StoredMessage[] = []
  const groups: number[] = []
  const starts: number[] = []
  parts.forEach((p, i) => {
    starts.push(rows.length + 1)
    for (const m of p.messages) {
      rows.push(m)
      groups.push(i + 1)
    }
  })
  const c = messageColumns(rows)
  const res = await run<{ first_seqs: string[]; low_seqs: Array<string | null>; append_ms: string }>(db, sql(t).enqueue, [
    `{${parts.map((p) => p.topicId).join(',')}}`,
    integerArray(parts.map((p) => p.partition)),
    integerArray(parts.map((p) => p.messages.length)),
    ...c.arrays,
    t.notifyChannel,
    ...c.scalars,
    integerArray(starts),
    integerArray(groups),
  ])
  const row = res.rows[0]
  return { firstSeqs: row.first_seqs, lowSeqs: row.low_seqs, appendTimeMs: row.append_ms }
}
