import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

export interface RecordsCutoff {
  partition: number
  /** Kafka offset: rows with a smaller offset (seq <= offset) go; '-1' = up to the high watermark */
  offset: string
}

const sql = statements('messages', (t) => ({
  // Kafka's DeleteRecords. Only message rows go: the sequence ledger is untouched, so later sends keep counting
  // from where the partition was and the low watermark (first stored seq - 1) moves up to the cutoff.
  deleteBefore: `
    WITH p AS (
      SELECT p.partition_id, CASE WHEN p.cutoff = -1 THEN s.next_seq - 1 ELSE p.cutoff END AS last_seq
      FROM unnest($2::int4[], $3::int8[]) AS p(partition_id, cutoff)
      JOIN ${t.partitionSeq} s ON s.topic_id = $1 AND s.partition_id = p.partition_id
    ), gone AS (
      DELETE FROM ${t.message} m USING p
      WHERE m.topic_id = $1 AND m.partition_id = p.partition_id AND m.enqueue_seq <= p.last_seq
      RETURNING m.partition_id
    )
    SELECT p.partition_id AS partition, (SELECT count(*) FROM gone g WHERE g.partition_id = p.partition_id)::int AS deleted
    FROM p ORDER BY p.partition_id`,
}))

/** Deletes each partition's messages below its cutoff; returns how many rows each partition lost. */
export async function deleteRecordsBefore(
  db: Queryable,
  t: Tables,
  topicId: string,
  cutoffs: RecordsCutoff[],
): Promise<Array<{ partition: number; deleted: number }>> {
  if (cutoffs.length === 0) return []
  const res = await run<{ partition: number; deleted: number }>(db, sql(t).deleteBefore, [
    topicId,
    cutoffs.map((c) => c.partition),
    cutoffs.map((c) => c.offset),
  ])
  return res.rows
}
