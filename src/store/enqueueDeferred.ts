import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { FLAG_FROM_LEDGER, MESSAGE_INSERT_COLUMNS, type StoredMessage } from './enqueue.js'
import { quoteIdent } from '../db/identifiers.js'
import { statements } from './statement.js'

const sql = statements('enqueueDeferred', (t) => {
  const defer = `${quoteIdent(t.schema)}.${quoteIdent(`${t.prefix}_defer_partition`)}`
  // Inside a caller's transaction: rows get negative provisional seqs and the deferred trigger assigns the real ones
  // at COMMIT (R__sequence_functions.sql), so no lock is held while the transaction stays open. defer_partition
  // records the partition for the commit-time numbering; at isolation levels the commit cannot serve it answers false,
  // nothing is written and no row comes back (the caller stages the messages instead: outboxStaging.ts).
  return {
    enqueue: `
    WITH ok AS (
      SELECT ${defer}($1, $2) AS deferred
    ), ins AS (
      INSERT INTO ${t.message} (${MESSAGE_INSERT_COLUMNS})
      SELECT $1, $2, r.routing_key, -nextval('${t.provisionalSeq}'), r.priority, r.payload,
             r.compression, r.headers::jsonb, r.flags | ${FLAG_FROM_LEDGER}, r.message_key, r.ts
      FROM ok, unnest($3::text[], $4::bytea[], $5::int2[], $6::int2[], $7::bytea[], $8::int2[], $9::text[], $10::int8[])
             WITH ORDINALITY AS r(routing_key, message_key, flags, priority, payload, compression, headers, ts, ord)
      WHERE ok.deferred
      ORDER BY r.ord
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM ins)::int AS inserted, pg_notify($11, $1::text),
           -- where the partition's log starts (KafkaJS's logStartOffset): its first numbered row; this transaction's
           -- own rows are provisional (negative) and never count
           (SELECT m.enqueue_seq FROM ${t.message} m
            WHERE m.topic_id = $1 AND m.partition_id = $2 AND m.enqueue_seq > 0
            ORDER BY m.enqueue_seq LIMIT 1)::text AS low_seq
    FROM ok WHERE ok.deferred`,
  }
})

/**
 * Inserts one partition's rows inside the caller's transaction; their seqs are assigned at its COMMIT. Returns
 * written false when the transaction is not READ COMMITTED and nothing was written; else the partition's first
 * numbered seq (its log start), null when it holds none.
 */
export async function enqueueDeferred(
  db: Queryable,
  t: Tables,
  topicId: string,
  partition: number,
  messages: StoredMessage[],
): Promise<{ written: boolean; lowSeq: string | null }> {
  const res = await run<{ low_seq: string | null }>(db, sql(t).enqueue, [topicId, partition, ...columnArrays(messages), t.notifyChannel])
  return { written: res.rows.length > 0, lowSeq: res.rows[0]?.low_seq ?? null }
}

/** The rows as one array per column ($3..$10 of the statements that write inside a caller's transaction). */
export function columnArrays(messages: StoredMessage[]): unknown[] {
  return [
    messages.map((m) => m.routingKey),
    messages.map((m) => m.messageKey),
    messages.map((m) => m.flags),
    messages.map((m) => m.priority),
    messages.map((m) => m.payload),
    messages.map((m) => m.compression),
    messages.map((m) => m.headers),
    messages.map((m) => m.timestamp),
  ]
}
