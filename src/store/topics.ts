import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

export interface TopicRow {
  id: string
  name: string
  partitionCount: number
  retentionMaxAgeSeconds: number
  maxRowsPerTopic: string
  maxTotalPayloadBytes: string
  aggressiveRetention: boolean
  config: Record<string, string>
}

export interface NewTopic {
  name: string
  partitionCount: number
  retentionMaxAgeSeconds: number
  maxRowsPerTopic: number
  maxTotalPayloadBytes: number
  aggressiveRetention: boolean
  config: Record<string, string>
  /** the topic's default content type (DataHub resolves a row's content type through it when the row has none) */
  contentTypeMime?: string
}

const TOPIC_COLUMNS = `id::text AS id, topic_name AS name, partition_count AS "partitionCount",
  retention_max_age_seconds AS "retentionMaxAgeSeconds", max_rows_per_topic::text AS "maxRowsPerTopic",
  max_total_payload_bytes::text AS "maxTotalPayloadBytes", aggressive_retention AS "aggressiveRetention", config`

const sql = statements('topics', (t) => ({
  // Creates missing topics and their sequence-ledger rows in one statement; existing topics are left alone. A
  // content type not yet in the catalogue is added first (DataHub's application/avro is there from V001).
  insert: `
    WITH new_mime AS (
      INSERT INTO ${t.contentType} (mime)
      SELECT DISTINCT x.mime FROM unnest($8::text[]) AS x(mime)
      WHERE x.mime IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${t.contentType} c WHERE c.mime = x.mime)
      ON CONFLICT (mime) DO NOTHING
      RETURNING id, mime
    ), ins AS (
      INSERT INTO ${t.topic} (topic_name, partition_count, retention_max_age_seconds, max_rows_per_topic,
                              max_total_payload_bytes, aggressive_retention, config, default_content_type_id)
      SELECT x.name, x.partitions, x.retention, x.max_rows, x.max_bytes, x.aggressive, x.config,
             COALESCE((SELECT n.id FROM new_mime n WHERE n.mime = x.mime),
                      (SELECT c.id FROM ${t.contentType} c WHERE c.mime = x.mime))
      FROM unnest($1::text[], $2::int[], $3::int[], $4::int8[], $5::int8[], $6::bool[], $7::text[]::jsonb[], $8::text[])
             AS x(name, partitions, retention, max_rows, max_bytes, aggressive, config, mime)
      ON CONFLICT (topic_name) DO NOTHING
      RETURNING id, topic_name, partition_count
    ), seq AS (
      INSERT INTO ${t.partitionSeq} (topic_id, partition_id)
      SELECT id, generate_series(0, partition_count - 1) FROM ins
      ON CONFLICT DO NOTHING
    )
    SELECT topic_name AS name FROM ins`,
  byNames: `SELECT ${TOPIC_COLUMNS} FROM ${t.topic} WHERE topic_name = ANY($1::text[])`,
  all: `SELECT ${TOPIC_COLUMNS} FROM ${t.topic} ORDER BY topic_name`,
  delete: `DELETE FROM ${t.topic} WHERE topic_name = ANY($1::text[]) RETURNING topic_name AS name`,
  // Partition counts only grow (as in Kafka and DataHub's catalogue upsert).
  grow: `
    WITH up AS (
      UPDATE ${t.topic} SET partition_count = $2 WHERE topic_name = $1 AND partition_count < $2
      RETURNING id, partition_count
    ), seq AS (
      INSERT INTO ${t.partitionSeq} (topic_id, partition_id)
      SELECT id, generate_series(0, partition_count - 1) FROM up
      ON CONFLICT DO NOTHING
    )
    SELECT count(*)::int AS grown FROM up`,
  // Ledger rows for a topic another client created without them (DataHub's own producers): seeded past the
  // highest stored seq so offsets keep counting up.
  seedLedger: `
    INSERT INTO ${t.partitionSeq} (topic_id, partition_id, next_seq)
    SELECT t.id, p.partition_id, COALESCE((
        SELECT max(m.enqueue_seq) FROM ${t.message} m
        WHERE m.topic_id = t.id AND m.partition_id = p.partition_id), 0) + 1
    FROM ${t.topic} t CROSS JOIN LATERAL generate_series(0, t.partition_count - 1) AS p(partition_id)
    WHERE t.id = $1
    ON CONFLICT DO NOTHING`,
  // Kafka watermarks: high = log-end offset = last seq; low = first retained offset = first stored seq - 1.
  watermarks: `
    SELECT s.partition_id AS partition, (s.next_seq - 1)::text AS high,
           (COALESCE(f.first_seq, s.next_seq) - 1)::text AS low
    FROM ${t.partitionSeq} s
    LEFT JOIN LATERAL (
      SELECT m.enqueue_seq AS first_seq FROM ${t.message} m
      WHERE m.topic_id = s.topic_id AND m.partition_id = s.partition_id
      ORDER BY m.enqueue_seq LIMIT 1
    ) f ON true
    WHERE s.topic_id = $1
    ORDER BY s.partition_id`,
  // First offset whose Kafka timestamp is at or after $2 (ms), else the high watermark.
  offsetsByTimestamp: `
    SELECT s.partition_id AS partition, (COALESCE(f.seq, s.next_seq) - 1)::text AS offset
    FROM ${t.partitionSeq} s
    LEFT JOIN LATERAL (
      SELECT m.enqueue_seq AS seq FROM ${t.message} m
      WHERE m.topic_id = s.topic_id AND m.partition_id = s.partition_id
        AND COALESCE(m.message_timestamp, (extract(epoch FROM m.enqueued_at) * 1000)::int8) >= $2
      ORDER BY m.enqueue_seq LIMIT 1
    ) f ON true
    WHERE s.topic_id = $1
    ORDER BY s.partition_id`,
}))

export async function insertTopics(db: Queryable, t: Tables, topics: NewTopic[]): Promise<string[]> {
  const res = await run<{ name: string }>(db, sql(t).insert, [
    topics.map((x) => x.name),
    topics.map((x) => x.partitionCount),
    topics.map((x) => x.retentionMaxAgeSeconds),
    topics.map((x) => x.maxRowsPerTopic),
    topics.map((x) => x.maxTotalPayloadBytes),
    topics.map((x) => x.aggressiveRetention),
    topics.map((x) => JSON.stringify(x.config)),
    topics.map((x) => x.contentTypeMime ?? null),
  ])
  return res.rows.map((r) => r.name)
}

export async function findTopics(db: Queryable, t: Tables, names: string[]): Promise<TopicRow[]> {
  return (await run<TopicRow>(db, sql(t).byNames, [names])).rows
}

export async function listTopics(db: Queryable, t: Tables): Promise<TopicRow[]> {
  return (await run<TopicRow>(db, sql(t).all)).rows
}

export async function deleteTopics(db: Queryable, t: Tables, names: string[]): Promise<string[]> {
  return (await run<{ name: string }>(db, sql(t).delete, [names])).rows.map((r) => r.name)
}

export async function growPartitions(db: Queryable, t: Tables, name: string, count: number): Promise<boolean> {
  return (await run<{ grown: number }>(db, sql(t).grow, [name, count])).rows[0].grown > 0
}

export async function seedLedger(db: Queryable, t: Tables, topicId: string): Promise<void> {
  await run(db, sql(t).seedLedger, [topicId])
}

export interface Watermarks {
  partition: number
  high: string
  low: string
}

export async function topicWatermarks(db: Queryable, t: Tables, topicId: string): Promise<Watermarks[]> {
  return (await run<Watermarks>(db, sql(t).watermarks, [topicId])).rows
}

export async function offsetsByTimestamp(
  db: Queryable,
  t: Tables,
  topicId: string,
  timestampMs: number,
): Promise<Array<{ partition: number; offset: string }>> {
  return (await run<{ partition: number; offset: string }>(db, sql(t).offsetsByTimestamp, [topicId, timestampMs])).rows
}
