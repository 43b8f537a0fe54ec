import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** Kafka's offset markers: latest (the log end) and earliest (the log start). */
export type OffsetMarker = -1 | -2

const sql = statements('offsetResets', (t) => ({
  // Stores the marker as Kafka does (reported until the group commits, resolved by the next consumer) and, in
  // offset_value, the watermark it means now, for readers that know no markers (DataHub's consumers). start_offset
  // remembers that value: once a DataHub consumer commits past it, offset_value is the truth again.
  mark: `
    WITH p AS (
      SELECT * FROM unnest($2::int8[], $3::int4[], $4::int2[], $5::text[]) AS p(topic_id, partition_id, marker, meta)
    ), w AS (
      SELECT p.*, CASE WHEN p.marker = -1 THEN s.next_seq - 1 ELSE COALESCE(f.first_seq, s.next_seq) - 1 END AS off
      FROM p JOIN ${t.partitionSeq} s ON s.topic_id = p.topic_id AND s.partition_id = p.partition_id
      LEFT JOIN LATERAL (
        SELECT m.enqueue_seq AS first_seq FROM ${t.message} m
        WHERE m.topic_id = p.topic_id AND m.partition_id = p.partition_id
        ORDER BY m.enqueue_seq LIMIT 1
      ) f ON p.marker = -2
    )
    INSERT INTO ${t.consumerOffset} AS co (consumer_group, topic_id, partition_id, offset_value, start_offset,
                                           metadata, reset_to, committed_at)
    SELECT $1, topic_id, partition_id, off, off, meta, marker, now() FROM w
    ON CONFLICT (consumer_group, topic_id, partition_id) DO UPDATE SET
      offset_value = EXCLUDED.offset_value, start_offset = EXCLUDED.start_offset, metadata = EXCLUDED.metadata,
      reset_to = EXCLUDED.reset_to, priority_offsets = NULL, epoch = 0, committed_at = now()`,
}))

export interface MarkedOffset {
  topicId: string
  partition: number
  marker: OffsetMarker
  metadata: string | null
}

export async function markOffsets(db: Queryable, t: Tables, group: string, marks: MarkedOffset[]): Promise<void> {
  if (marks.length === 0) return
  await run(db, sql(t).mark, [
    group,
    marks.map((m) => m.topicId),
    marks.map((m) => m.partition),
    marks.map((m) => m.marker),
    marks.map((m) => m.metadata),
  ])
}
