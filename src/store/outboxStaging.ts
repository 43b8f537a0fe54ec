import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { quoteIdent } from '../db/identifiers.js'
import type { StoredMessage } from './enqueue.js'
import { columnArrays } from './enqueueDeferred.js'
import { statements } from './statement.js'

/** Payload prefix of the notification a staging transaction sends at its COMMIT: `o:<topicId>` (numbering wanted). */
export const OUTBOX_NOTIFY_PREFIX = 'o:'

/** Transactions one numbering step moves at most; a driver calls again while steps come back full. */
export const OUTBOX_STEP_TRANSACTIONS = 100

const sql = statements('outboxStaging', (t) => {
  const fn = (name: string) => `${quoteIdent(t.schema)}.${quoteIdent(`${t.prefix}_${name}`)}`
  return {
    // Inside a REPEATABLE READ or SERIALIZABLE caller's transaction: insert only (no foreign key, nothing read), so
    // nothing here can conflict with another transaction; the notification, delivered at the caller's COMMIT, asks
    // the listening clients to number (docs/decisions/outbox-010-staged-numbering.md).
    stage: `
    WITH tx AS (
      SELECT ${fn('outbox_begin')}() AS id
    ), ins AS (
      INSERT INTO ${fn('outbox_message')}
        (tx_id, topic_id, partition_id, routing_key, priority, payload, payload_compression, headers, kafka_flags, message_key, message_timestamp)
      SELECT tx.id, $1, $2, r.routing_key, r.priority, r.payload, r.compression, r.headers::jsonb, r.flags, r.message_key, r.ts
      FROM tx, unnest($3::text[], $4::bytea[], $5::int2[], $6::int2[], $7::bytea[], $8::int2[], $9::text[], $10::int8[])
             WITH ORDINALITY AS r(routing_key, message_key, flags, priority, payload, compression, headers, ts, ord)
      ORDER BY r.ord
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM ins)::int AS staged, pg_notify($11, '${OUTBOX_NOTIFY_PREFIX}' || $1::text)`,
    number: `SELECT ${fn('number_outbox')}($1, $2) AS numbered`,
  }
})

/** Stages one partition's messages in the caller's (REPEATABLE READ or SERIALIZABLE) transaction, unnumbered. */
export async function stageOutbox(db: Queryable, t: Tables, topicId: string, partition: number, messages: StoredMessage[]): Promise<void> {
  await run(db, sql(t).stage, [topicId, partition, ...columnArrays(messages), t.notifyChannel])
}

/** One numbering step (its own transaction): moves committed staged messages into the log; returns transactions moved. */
export async function numberOutbox(db: Queryable, t: Tables, maxTransactions = OUTBOX_STEP_TRANSACTIONS): Promise<number> {
  const res = await run<{ numbered: number }>(db, sql(t).number, [maxTransactions, t.notifyChannel])
  return res.rows[0].numbered
}
