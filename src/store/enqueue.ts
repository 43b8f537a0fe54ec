import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { quoteIdent } from '../db/identifiers.js'
import { byteaArray, integerArray, textArray } from './arrayLiterals.js'
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
/** Set on every row this library writes: its seq came from the ledger, so the ledger trigger for rows other clients
 * (DataHub's producers) write skips it. Readers ignore it. */
export const FLAG_FROM_LEDGER = 4

// Payloads arrive as ONE bytea (sent in binary) plus each row's 1-based start and length, cut out with substring: a
// bytea[] parameter would be sent as hex text, doubling the bytes and costing a hex encode on the client and a decode
// per element here.
/** The columns both message writes fill (here and enqueueDeferred.ts), in the order of their SELECT lists. */
export const MESSAGE_INSERT_COLUMNS =
  'topic_id, partition_id, routing_key, enqueue_seq, priority, payload, payload_compression, headers, kafka_flags, message_key, message_timestamp'

const sql = statements('enqueue', (t) => {
  const allocate = `${quoteIdent(t.schema)}.${quoteIdent(`${t.prefix}_allocate_seq`)}`
  // One round trip per (send, partition): allocate_seq takes DataHub's advisory lock for the partition (held until
  // commit, so seq order is commit order and a rollback leaves no gap) and the seq range, then every row is inserted
  // and listeners are notified on commit. Idempotent producers add $15 producer id and $16 the batch's last producer
  // sequence: a batch already written (a retry after the connection dropped) gets its original offsets back.
  const enqueue = (args: string) => `
    WITH seq AS (
      SELECT a.first_seq, a.duplicate, a.low_seq FROM ${allocate}(${args}) a
    ), ins AS (
      INSERT INTO ${t.message} (${MESSAGE_INSERT_COLUMNS})
      SELECT $1, $2, r.routing_key, seq.first_seq + r.ord - 1, r.priority, substring($8::bytea FROM r.off FOR r.len),
             r.compression, r.headers::jsonb, r.flags | ${FLAG_FROM_LEDGER}, r.message_key, r.ts
      FROM seq, unnest($4::text[], $5::bytea[], $6::int2[], $7::int2[], $9::int4[], $10::int4[], $11::int2[], $12::text[], $13::int8[])
             WITH ORDINALITY AS r(routing_key, message_key, flags, priority, off, len, compression, headers, ts, ord)
      WHERE NOT seq.duplicate
    )
    SELECT seq.first_seq::text AS first_seq, seq.duplicate, seq.low_seq::text AS low_seq,
           (extract(epoch FROM now()) * 1000)::int8::text AS append_ms,
           pg_notify($14, $1::text)
    FROM seq`
  return {
    enqueue: enqueue('$1, $2, $3'),
    enqueueIdempotent: enqueue('$1, $2, $3, $15, $16'),
  }
})

/** Identifies an idempotent producer's batch: the producer and the batch's last sequence for this partition. */
export interface ProducerSequence {
  producerId: string
  lastSequence: number
}

export interface EnqueueResult {
  firstSeq: string
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
  const res = await run<{ first_seq: string; duplicate: boolean; append_ms: string; low_seq: string | null }>(db, statement, [
    topicId,
    partition,
    n,
    textArray(routingKeys),
    byteaArray(keys),
    integerArray(flags),
    integerArray(priorities),
    n === 1 ? payloads[0] : Buffer.concat(payloads, offset - 1),
    integerArray(starts),
    integerArray(lengths),
    integerArray(codecs),
    textArray(headers),
    integerArray(timestamps),
    t.notifyChannel,
    ...(idempotence ? [idempotence.producerId, idempotence.lastSequence] : []),
  ])
  const row = res.rows[0]
  return { firstSeq: row.first_seq, duplicate: row.duplicate, appendTimeMs: row.append_ms, lowSeq: row.low_seq }
}
