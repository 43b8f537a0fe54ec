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
// per element here. A column whose value is the same in every row (usually all but the payload: no keys, no headers,
// one priority and codec) goes as one scalar and a NULL array, which unnest pads with NULLs: the server parses an
// array literal only where rows differ (9 arrays cost it 0.8 us per row, about a tenth of a send).
/** The columns both message writes fill (here and enqueueDeferred.ts), in the order of their SELECT lists. */
export const MESSAGE_INSERT_COLUMNS =
  'topic_id, partition_id, routing_key, enqueue_seq, priority, payload, payload_compression, headers, kafka_flags, message_key, message_timestamp'

const sql = statements('enqueue', (t) => {
  const allocate = `${quoteIdent(t.schema)}.${quoteIdent(`${t.prefix}_allocate_seq`)}`
  // One round trip per (send, partition): allocate_seq takes DataHub's advisory lock for the partition (held until
  // commit, so seq order is commit order and a rollback leaves no gap) and the seq range, then every row is inserted
  // and listeners are notified on commit. Idempotent producers add $22 producer id and $23 the batch's last producer
  // sequence: a batch already written (a retry after the connection dropped) gets its original offsets back. $15..$21
  // are the columns' values when every row has the same one (their arrays are then NULL).
  const enqueue = (args: string) => `
    WITH seq AS (
      SELECT a.first_seq, a.duplicate, a.low_seq FROM ${allocate}(${args}) a
    ), ins AS (
      INSERT INTO ${t.message} (${MESSAGE_INSERT_COLUMNS})
      SELECT $1, $2, COALESCE(r.routing_key, $15), seq.first_seq + r.ord - 1, COALESCE(r.priority, $16::int2),
             substring($8::bytea FROM r.off FOR r.len), COALESCE(r.compression, $17::int2), COALESCE(r.headers, $18)::jsonb,
             COALESCE(r.flags, $19::int2) | ${FLAG_FROM_LEDGER}, COALESCE(r.message_key, $20::bytea), COALESCE(r.ts, $21::int8)
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
    enqueueIdempotent: enqueue('$1, $2, $3, $22, $23'),
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
  const c = messageColumns(messages)
  const res = await run<{ first_seq: string; duplicate: boolean; append_ms: string; low_seq: string | null }>(db, statement, [
    topicId,
    partition,
    messages.length,
    ...c.arrays,
    t.notifyChannel,
    ...c.scalars,
    ...(idempotence ? [idempotence.producerId, idempotence.lastSequence] : []),
  ])
  const row = res.rows[0]
  return { firstSeq: row.first_seq, duplicate: row.duplicate, appendTimeMs: row.append_ms, lowSeq: row.low_seq }
}

/**
 * The per-row parameters of a message insert: $4..$13 (routing keys, message keys, flags, priorities, the payloads as
 * one bytea, their starts and lengths, codecs, headers, timestamps) and $15..$21 (the scalars of the columns whose
 * value is the same in every row; their arrays are then NULL).
 */
export function messageColumns(messages: readonly StoredMessage[]): { arrays: unknown[]; scalars: unknown[] } {
  const n = messages.length
  const first = messages[0]
  const payloads = new Array<Buffer>(n)
  const starts = new Array<number>(n)
  const lengths = new Array<number>(n)
  let offset = 1
  const same = {
    routingKey: true,
    messageKey: first.messageKey === null,
    flags: true,
    priority: true,
    compression: true,
    headers: true,
    timestamp: true,
  }
  for (let i = 0; i < n; i++) {
    const m = messages[i]
    payloads[i] = m.payload
    starts[i] = offset
    lengths[i] = m.payload.length
    offset += m.payload.length
    if (m.routingKey !== first.routingKey) same.routingKey = false
    if (m.messageKey !== null) same.messageKey = false
    if (m.flags !== first.flags) same.flags = false
    if (m.priority !== first.priority) same.priority = false
    if (m.compression !== first.compression) same.compression = false
    if (m.headers !== first.headers) same.headers = false
    if (m.timestamp !== first.timestamp) same.timestamp = false
  }
  const column = <K extends keyof typeof same>(k: K, literal: (values: StoredMessage[K][]) => string): string | null =>
    same[k] ? null : literal(messages.map((m) => m[k]))
  const scalar = <K extends keyof typeof same>(k: K): StoredMessage[K] | null => (same[k] ? first[k] : null)
  return {
    arrays: [
      column('routingKey', textArray),
      column('messageKey', byteaArray),
      column('flags', integerArray),
      column('priority', integerArray),
      n === 1 ? payloads[0] : Buffer.concat(payloads, offset - 1),
      integerArray(starts),
      integerArray(lengths),
      column('compression', integerArray),
      column('headers', textArray),
      column('timestamp', integerArray),
    ],
    scalars: [
      scalar('routingKey'),
      scalar('priority'),
      scalar('compression'),
      scalar('headers'),
      scalar('flags'),
      scalar('messageKey'),
      scalar('timestamp'),
    ],
  }
}
