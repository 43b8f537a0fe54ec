// What the console shows about topics: every partition's watermarks in one statement (the topic list), and one
// topic's stored rows and bytes per partition (the topic page; that one reads every row of the topic, so it is
// asked for one topic at a time, never for the list).
import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

export interface PartitionMarks {
  topic: string
  partition: number
  /** next_seq - 1 */
  high: string
  /** first stored seq - 1 (the high watermark when the partition is empty) */
  low: string
}

export interface PartitionUsage {
  partition: number
  /** stored rows (fewer than high - low when rows in the middle are gone, e.g. aborted transactional sends) */
  messages: string
  /** sum of payload_bytes */
  bytes: string
}

const sql = statements('partitionStats', (t) => ({
  // the first stored seq per partition is one index probe, as in topics.ts's watermarks
  allMarks: `
    SELECT t.topic_name AS topic, s.partition_id AS partition, (s.next_seq - 1)::text AS high,
           (COALESCE(f.first_seq, s.next_seq) - 1)::text AS low
    FROM ${t.topic} t
    JOIN ${t.partitionSeq} s ON s.topic_id = t.id AND s.partition_id < t.partition_count
    LEFT JOIN LATERAL (
      SELECT m.enqueue_seq AS first_seq FROM ${t.message} m
      WHERE m.topic_id = s.topic_id AND m.partition_id = s.partition_id
      ORDER BY m.enqueue_seq LIMIT 1
    ) f ON true
    ORDER BY t.topic_name, s.partition_id`,
  usage: `
    SELECT m.partition_id AS partition, count(*)::text AS messages, sum(m.payload_bytes)::text AS bytes
    FROM ${t.message} m WHERE m.topic_id = $1
    GROUP BY m.partition_id ORDER BY m.partition_id`,
}))

export async function allPartitionMarks(db: Queryable, t: Tables): Promise<PartitionMarks[]> {
  return (await run<PartitionMarks>(db, sql(t).allMarks)).rows
}

/** Partitions without rows are absent. */
export async function partitionUsage(db: Queryable, t: Tables, topicId: string): Promise<PartitionUsage[]> {
  return (await run<PartitionUsage>(db, sql(t).usage, [topicId])).rows
}
