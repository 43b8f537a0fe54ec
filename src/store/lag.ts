import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** One committed cell: a group's offset on one partition next to that partition's high watermark. */
export interface OffsetCell {
  group: string
  topic: string
  partition: number
  /** offset_value: last processed seq = Kafka committed offset */
  offset: string
  /** next_seq - 1 from the sequence ledger, so an emptied partition still knows where its log ends */
  high: string
  /** null for a starting position a consumer wrote before the group committed anything */
  committedAt: number | null
}

export interface ResetCell {
  group: string
  topic: string
  partition: number
  /** null when the group had no offset on this partition yet */
  previousOffset: string | null
  newOffset: string
}

export interface ResetFilter {
  group: string | null
  topic: string | null
  partition: number | null
  onlyStuckAhead: boolean
  /** also write partitions the group has no offset on (only with a group and a topic) */
  fillMissing: boolean
}

const sql = statements('lag', (t) => ({
  // the health probe: reaches the server and reads the queue schema (a missing schema is as bad as no server)
  probe: `SELECT 1 FROM ${t.partitionSeq} LIMIT 1`,
  cells: `
    SELECT o.consumer_group AS "group", t.topic_name AS topic, o.partition_id AS partition,
           o.offset_value::text AS offset, (s.next_seq - 1)::text AS high,
           floor(extract(epoch FROM o.committed_at) * 1000)::float8 AS "committedAt"
    FROM ${t.consumerOffset} o
    JOIN ${t.topic} t ON t.id = o.topic_id
    JOIN ${t.partitionSeq} s ON s.topic_id = o.topic_id AND s.partition_id = o.partition_id
    WHERE ($1::text IS NULL OR o.consumer_group = $1) AND ($2::text IS NULL OR t.topic_name = $2)
    ORDER BY o.consumer_group, t.topic_name, o.partition_id`,
  // Topics whose ledger lacks partitions (created by DataHub's own clients): seeded before lag or reset reads it.
  missingLedger: `
    SELECT t.id::text AS id FROM ${t.topic} t
    WHERE t.partition_count > (SELECT count(*) FROM ${t.partitionSeq} s WHERE s.topic_id = t.id)`,
  // DataHub's reset (offset := end of log, epoch := 0), but the end comes from the ledger rather than MAX(seq):
  // an emptied partition can be reset too. Per-priority progress is cleared so the reset offset is what counts.
  reset: `
    WITH cells AS (
      SELECT COALESCE(o.consumer_group, $1::text) AS consumer_group, s.topic_id, t.topic_name, s.partition_id,
             o.offset_value AS previous, s.next_seq - 1 AS high
      FROM ${t.partitionSeq} s
      JOIN ${t.topic} t ON t.id = s.topic_id
      LEFT JOIN ${t.consumerOffset} o ON o.topic_id = s.topic_id AND o.partition_id = s.partition_id
        AND ($1::text IS NULL OR o.consumer_group = $1)
      WHERE ($2::text IS NULL OR t.topic_name = $2) AND ($3::int IS NULL OR s.partition_id = $3)
        AND CASE WHEN o.consumer_group IS NULL THEN $1::text IS NOT NULL AND $5::bool
                 ELSE NOT $4::bool OR o.offset_value > s.next_seq - 1 END
    ), up AS (
      INSERT INTO ${t.consumerOffset} AS co (consumer_group, topic_id, partition_id, offset_value, epoch, committed_at)
      SELECT consumer_group, topic_id, partition_id, high, 0, now() FROM cells
      ON CONFLICT (consumer_group, topic_id, partition_id) DO UPDATE
        SET offset_value = EXCLUDED.offset_value, epoch = 0, priority_offsets = NULL, reset_to = NULL, committed_at = now()
      RETURNING co.consumer_group, co.topic_id, co.partition_id
    )
    SELECT c.consumer_group AS "group", c.topic_name AS topic, c.partition_id AS partition,
           c.previous::text AS "previousOffset", c.high::text AS "newOffset"
    FROM cells c JOIN up USING (consumer_group, topic_id, partition_id)
    ORDER BY 1, 2, 3`,
}))

export async function offsetCells(db: Queryable, t: Tables, filter: { group: string | null; topic: string | null }): Promise<OffsetCell[]> {
  return (await run<OffsetCell>(db, sql(t).cells, [filter.group, filter.topic])).rows
}

export async function topicsMissingLedger(db: Queryable, t: Tables): Promise<string[]> {
  return (await run<{ id: string }>(db, sql(t).missingLedger)).rows.map((r) => r.id)
}

export async function resetOffsetsToHigh(db: Queryable, t: Tables, f: ResetFilter): Promise<ResetCell[]> {
  const res = await run<ResetCell>(db, sql(t).reset, [f.group, f.topic, f.partition, f.onlyStuckAhead, f.fillMissing])
  return res.rows
}

export async function probeLedger(db: Queryable, t: Tables): Promise<void> {
  await run(db, sql(t).probe)
}
