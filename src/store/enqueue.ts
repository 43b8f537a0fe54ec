import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** One message as stored: DataHub's columns plus the Kafka fields of V002. */
export interface StoredMessage {
  routingKey: string
  /** key bytes, only when routingKey cannot represent them */
  messageKey: Buffer | null
  /** bit 1: value is null, bit 2: key is null */
  flags: number
  priority: number
  payload: Buffer
  compression: number
  /** DataHub header JSON text, or null */
  headers: string | null
  /** producer timestamp in ms, or null to use enqueued_at */
  timestamp: number | null
}

export const FLAG_NULL_VALUE = 1
export const FLAG_NULL_KEY = 2

const sql = statements((t) => ({
  // One round trip per (send, partition): take a seq range from the ledger (its row lock is held until commit, so
  // seq order is commit order and a rollback leaves no gap), insert every row, and notify listeners on commit.
  enqueue: `
    WITH seq AS (
      UPDATE ${t.partitionSeq} SET next_seq = next_seq + $3
      WHERE topic_id = $1 AND partition_id = $2
      RETURNING next_seq - $3 AS first_seq
    ), ins AS (
      INSERT INTO ${t.message} (topic_id, partition_id, routing_key, enqueue_seq, priority, payload,
                                payload_compression, headers, kafka_flags, message_key, message_timestamp)
      SELECT $1, $2, r.routing_key, seq.first_seq + r.ord - 1, r.priority, r.payload,
             r.compression, r.headers::jsonb, r.flags, r.message_key, r.ts
      FROM seq, unnest($4::text[], $5::bytea[], $6::int2[], $7::int2[], $8::bytea[], $9::int2[], $10::text[], $11::int8[])
             WITH ORDINALITY AS r(routing_key, message_key, flags, priority, payload, compression, headers, ts, ord)
      RETURNING 1
    )
    SELECT (SELECT first_seq FROM seq)::text AS first_seq,
           (SELECT count(*) FROM ins)::int AS inserted,
           (extract(epoch FROM now()) * 1000)::int8::text AS append_ms,
           pg_notify($12, $1::text)`,
}))

export interface EnqueueResult {
  /** null when the partition has no ledger row (seed it and retry) */
  firstSeq: string | null
  appendTimeMs: string
}

export async function enqueuePartition(
  db: Queryable,
  t: Tables,
  topicId: string,
  partition: number,
  messages: StoredMessage[],
): Promise<EnqueueResult> {
  const res = await run<{ first_seq: string | null; inserted: number; append_ms: string }>(db, sql(t).enqueue, [
    topicId,
    partition,
    messages.length,
    messages.map((m) => m.routingKey),
    messages.map((m) => m.messageKey),
    messages.map((m) => m.flags),
    messages.map((m) => m.priority),
    messages.map((m) => m.payload),
    messages.map((m) => m.compression),
    messages.map((m) => m.headers),
    messages.map((m) => m.timestamp),
    t.notifyChannel,
  ])
  const row = res.rows[0]
  return { firstSeq: row.first_seq, appendTimeMs: row.append_ms }
}
