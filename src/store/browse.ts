// Reading a partition's stored messages without a group (the console's message browser): no lease, no offset, no
// effect on consumers. Rows come in seq order through the (topic, partition, seq, enqueued_at) unique index.
import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import type { FetchedRow } from './fetch.js'
import { statements } from './statement.js'

export interface BrowseQuery {
  topicId: string
  partition: number
  /** first Kafka offset to return (seq = offset + 1) */
  fromOffset: string
  limit: number
  /** only rows with this routing key (the key as text); this scans the partition from fromOffset on */
  key?: string
}

const sql = statements('browse', (t) => ({
  browse: `
    SELECT m.enqueue_seq::text AS seq, m.priority, m.routing_key AS "routingKey", m.message_key AS "messageKey",
           m.kafka_flags AS flags, m.payload, m.payload_compression AS compression, m.headers,
           COALESCE(m.message_timestamp, (extract(epoch FROM m.enqueued_at) * 1000)::int8)::text AS "timestampMs",
           (extract(epoch FROM m.enqueued_at) * 1000)::int8::text AS "enqueuedAtMs", m.payload_bytes::int AS "payloadBytes"
    FROM ${t.message} m
    WHERE m.topic_id = $1 AND m.partition_id = $2 AND m.enqueue_seq > $3 AND ($5::text IS NULL OR m.routing_key = $5)
    ORDER BY m.enqueue_seq
    LIMIT $4`,
}))

export async function browseMessages(db: Queryable, t: Tables, q: BrowseQuery): Promise<FetchedRow[]> {
  return (await run<FetchedRow>(db, sql(t).browse, [q.topicId, q.partition, q.fromOffset, q.limit, q.key ?? null])).rows
}
