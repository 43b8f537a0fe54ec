import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import type { StoredMessage } from './enqueue.js'
import { statements } from './statement.js'

const sql = statements((t) => ({
  // Inside a caller's transaction: rows get negative provisional seqs and the deferred trigger of V008 assigns the
  // real ones at COMMIT, so the partition's ledger row is not held for the whole transaction.
  enqueue: `
    WITH ledger AS (
      SELECT 1 FROM ${t.partitionSeq} WHERE topic_id = $1 AND partition_id = $2
    ), ins AS (
      INSERT INTO ${t.message} (topic_id, partition_id, routing_key, enqueue_seq, priority, payload,
                                payload_compression, headers, kafka_flags, message_key, message_timestamp)
      SELECT $1, $2, r.routing_key, -nextval('${t.provisionalSeq}'), r.priority, r.payload,
             r.compression, r.headers::jsonb, r.flags, r.message_key, r.ts
      FROM ledger, unnest($3::text[], $4::bytea[], $5::int2[], $6::int2[], $7::bytea[], $8::int2[], $9::text[], $10::int8[])
             WITH ORDINALITY AS r(routing_key, message_key, flags, priority, payload, compression, headers, ts, ord)
      ORDER BY r.ord
      RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM ledger) AS ledger, (SELECT count(*) FROM ins)::int AS inserted, pg_notify($11, $1::text)`,
}))

/** Returns false when the partition has no ledger row (seed it and retry). */
export async function enqueueDeferred(
  db: Queryable,
  t: Tables,
  topicId: string,
  partition: number,
  messages: StoredMessage[],
): Promise<boolean> {
  const res = await run<{ ledger: boolean }>(db, sql(t).enqueue, [
    topicId,
    partition,
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
  return res.rows[0].ledger
}
