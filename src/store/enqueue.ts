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

// The row insert shared by both statements: seq comes from the ledger CTE named `seq`. Payloads arrive as ONE bytea
// (sent in binary) plus each row's 1-based start and length, cut out with substring: a bytea[] parameter would be
// sent as hex text, doubling the bytes and costing a hex encode on the client and a decode per element here.
const insertRows = (t: Tables) => `
      INSERT INTO ${t.message} (topic_id, partition_id, routing_key, enqueue_seq, priority, payload,
                                payload_compression, headers, kafka_flags, message_key, message_timestamp)
      SELECT $1, $2, r.routing_key, seq.first_seq + r.ord - 1, r.priority, substring($8::bytea FROM r.off FOR r.len),
             r.compression, r.headers::jsonb, r.flags, r.message_key, r.ts
      FROM seq, unnest($4::text[], $5::bytea[], $6::int2[], $7::int2[], $9::int4[], $10::int4[], $11::int2[], $12::text[], $13::int8[])
             WITH ORDINALITY AS r(routing_key, message_key, flags, priority, off, len, compression, headers, ts, ord)`

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
           (SELECT m.enqueue_seq FROM ${t.message} m WHERE m.topic_id = $1 AND m.partition_id = $2
            ORDER BY m.enqueue_seq LIMIT 1)::text AS low_seq,
           (extract(epoch FROM now()) * 1000)::int8::text AS append_ms,
           pg_notify($14, $1::text)`,
  // The idempotent form: $15 producer id, $16 the batch's last producer sequence. A batch this producer already
  // wrote (a retry after the connection dropped during COMMIT) is answered with its original offsets instead.
  // The producer sends one batch per partition at a time, so "already written" is last_sequence >= $16.
  enqueueIdempotent: `
    WITH dup AS (
      SELECT last_base_seq FROM ${t.producerSequence}
      WHERE producer_id = $15 AND topic_id = $1 AND partition_id = $2 AND last_sequence >= $16
    ), seq AS (
      UPDATE ${t.partitionSeq} SET next_seq = next_seq + $3
      WHERE topic_id = $1 AND partition_id = $2 AND NOT EXISTS (SELECT 1 FROM dup)
      RETURNING next_seq - $3 AS first_seq
    ), ins AS (${insertRows(t)}
    ), mark AS (
      INSERT INTO ${t.producerSequence} (producer_id, topic_id, partition_id, last_sequence, last_base_seq)
      SELECT $15, $1, $2, $16, first_seq FROM seq
      ON CONFLICT (producer_id, topic_id, partition_id) DO UPDATE
        SET last_sequence = EXCLUDED.last_sequence, last_base_seq = EXCLUDED.last_base_seq, updated_at = now()
    )
    SELECT COALESCE((SELECT first_seq FROM seq), (SELECT last_base_seq FROM dup))::text AS first_seq,
           EXISTS (SELECT 1 FROM dup) AS duplicate,
           (SELECT m.enqueue_seq FROM ${t.message} m WHERE m.topic_id = $1 AND m.partition_id = $2
            ORDER BY m.enqueue_seq LIMIT 1)::text AS low_seq,
           (extract(epoch FROM now()) * 1000)::int8::text AS append_ms,
           pg_notify($14, $1::text)`,
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
  /** the partition's first stored seq before this write (the log start), null when it held no rows */
  lowSeq: string | null
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
  const n = messages.length
  const routingKeys = new Array<string>(n)
  const keys = new Array<Buffer | null>(n)
  const flags = new Array<number>(n)
  const priorities = new Array<number>(n)
  const payloads = new Array<Buffer>(n)
  const starts = new Array<number>(n)
  const lengths = new Array<number>(n)
  const codecs = new Array<number>(n)
  const headers = new Array<string | null>(n)
  const timestamps = new Array<number | null>(n)
  let offset = 1
  for (let i = 0; i < n; i++) {
    const m = messages[i]
    routingKeys[i] = m.routingKey
    keys[i] = m.messageKey
    flags[i] = m.flags
    priorities[i] = m.priority
    payloads[i] = m.payload
    starts[i] = offset
    lengths[i] = m.payload.length
    offset += m.payload.length
    codecs[i] = m.compression
    headers[i] = m.headers
    timestamps[i] = m.timestamp
  }
  const res = await run<{ first_seq: string | null; duplicate: boolean; append_ms: string; low_seq: string | null }>(db, statement, [
    topicId,
    partition,
    n,
    routingKeys,
    keys,
    flags,
    priorities,
    n === 1 ? payloads[0] : Buffer.concat(payloads, offset - 1),
    starts,
    lengths,
    codecs,
    headers,
    timestamps,
    t.notifyChannel,
    ...(idempotence ? [idempotence.producerId, idempotence.lastSequence] : []),
  ])
  const row = res.rows[0]
  return { firstSeq: row.first_seq, duplicate: row.duplicate, appendTimeMs: row.append_ms, lowSeq: row.low_seq }
}
