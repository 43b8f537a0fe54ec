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

// The row insert shared by both statements: seq comes from the ledger CTE named `seq`.
const insertRows = (t: Tables) => `
      INSERT INTO ${t.message} (topic_id, partition_id, routing_key, enqueue_seq, priority, payload,
                                payload_compression, headers, kafka_flags, message_key, message_timestamp)
      SELECT $1, $2, r.routing_key, seq.first_seq + r.ord - 1, r.priority, r.payload,
             r.compression, r.headers::jsonb, r.flags, r.message_key, r.ts
      FROM seq, unnest($4::text[], $5::bytea[], $6::int2[], $7::int2[], $8::bytea[], $9::int2[], $10::text[], $11::int8[])
             WITH ORDINALITY AS r(routing_key, message_key, flags, priority, payload, compression, headers, ts, ord)
      RETURNING 1`

const sql = statements((t) => ({
  // One round trip per (send, partition): take a seq range from the ledger (its row lock is held until commit, so
  // seq order is commit order and a rollback leaves no gap), insert every row, and notify listeners on commit.
  enqueue: `
    WITH seq AS (
      UPDATE ${t.partitionSeq} SET next_seq = next_seq + $3
      WHERE topic_id = $1 AND partition_id = $2
      RETURNING next_seq - $3 AS first_seq
    ), ins AS (${insertRows(t)}
    )
    SELECT (SELECT first_seq FROM seq)::text AS first_seq, false AS duplicate,
           (extract(epoch FROM now()) * 1000)::int8::text AS append_ms,
           pg_notify($12, $1::text)`,
  // The idempotent form: $13 producer id, $14 the batch's last producer sequence. A batch this producer already
  // wrote (a retry after the connection dropped during COMMIT) is answered with its original offsets instead.
  // The producer sends one batch per partition at a time, so "already written" is last_sequence >= $14.
  enqueueIdempotent: `
    WITH dup AS (
      SELECT last_base_seq FROM ${t.producerSequence}
      WHERE producer_id = $13 AND topic_id = $1 AND partition_id = $2 AND last_sequence >= $14
    ), seq AS (
      UPDATE ${t.partitionSeq} SET next_seq = next_seq + $3
      WHERE topic_id = $1 AND partition_id = $2 AND NOT EXISTS (SELECT 1 FROM dup)
      RETURNING next_seq - $3 AS first_seq
    ), ins AS (${insertRows(t)}
    ), mark AS (
      INSERT INTO ${t.producerSequence} (producer_id, topic_id, partition_id, last_sequence, last_base_seq)
      SELECT $13, $1, $2, $14, first_seq FROM seq
      ON CONFLICT (producer_id, topic_id, partition_id) DO UPDATE
        SET last_sequence = EXCLUDED.last_sequence, last_base_seq = EXCLUDED.last_base_seq, updated_at = now()
    )
    SELECT COALESCE((SELECT first_seq FROM seq), (SELECT last_base_seq FROM dup))::text AS first_seq,
           EXISTS (SELECT 1 FROM dup) AS duplicate,
           (extract(epoch FROM now()) * 1000)::int8::text AS append_ms,
           pg_notify($12, $1::text)`,
}))

/** Identifies an idempotent producer's batch: the producer and the batch's last sequence for this partition. */
export interface ProducerSequence {
  producerId: string
  lastSequence: number
}

export interface EnqueueResult {
  /** null when the partition has no ledger row (seed it and retry) */
  firstSeq: string | null
  /** the batch had been written before (idempotent retry) */
  duplicate: boolean
  appendTimeMs: string
}

export async function enqueuePartition(
  db: Queryable,
  t: Tables,
  topicId: string,
  partition: number,
  messages: StoredMessage[],
  idempotence?: ProducerSequence,
): Promise<EnqueueResult> {
  const statement = idempotence ? sql(t).enqueueIdempotent : sql(t).enqueue
  const res = await run<{ first_seq: string | null; duplicate: boolean; append_ms: string }>(db, statement, [
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
    ...(idempotence ? [idempotence.producerId, idempotence.lastSequence] : []),
  ])
  const row = res.rows[0]
  return { firstSeq: row.first_seq, duplicate: row.duplicate, appendTimeMs: row.append_ms }
}
