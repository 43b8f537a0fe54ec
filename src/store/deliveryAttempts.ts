import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** A message as a group sees it: topic by name, the Kafka offset (enqueue_seq - 1). */
export interface AttemptKey {
  group: string
  topic: string
  partition: number
  offset: string
}

const sql = statements('deliveryAttempts', (t) => ({
  read: `
    SELECT a.attempts FROM ${t.deliveryAttempt} a JOIN ${t.topic} tp ON tp.id = a.topic_id
    WHERE a.consumer_group = $1 AND tp.topic_name = $2 AND a.partition_id = $3 AND a.enqueue_seq = $4::bigint + 1`,
  // the count only grows: two members racing on one message (a rebalance) cannot lower it
  record: `
    INSERT INTO ${t.deliveryAttempt} AS a (consumer_group, topic_id, partition_id, enqueue_seq, attempts, last_error)
    SELECT $1, tp.id, $3, $4::bigint + 1, $5, $6 FROM ${t.topic} tp WHERE tp.topic_name = $2
    ON CONFLICT (consumer_group, topic_id, partition_id, enqueue_seq) DO UPDATE
      SET attempts = GREATEST(a.attempts, EXCLUDED.attempts), last_error = EXCLUDED.last_error, updated_at = now()`,
  // messages failing right now, oldest first. A row lives until its message succeeds or is dead-lettered in the
  // process that failed it; one whose message the group has committed since (it succeeded in another member after
  // a rebalance or a crash) is not failing any more and is left out.
  list: `
    SELECT a.consumer_group AS "group", tp.topic_name AS topic, a.partition_id AS partition,
           (a.enqueue_seq - 1)::text AS "offset", a.attempts, a.last_error AS "lastError", a.updated_at AS "updatedAt"
    FROM ${t.deliveryAttempt} a JOIN ${t.topic} tp ON tp.id = a.topic_id
    WHERE ($1::text IS NULL OR a.consumer_group = $1) AND ($2::text IS NULL OR tp.topic_name = $2)
      AND NOT EXISTS (
        SELECT 1 FROM ${t.consumerOffset} co
        WHERE co.consumer_group = a.consumer_group AND co.topic_id = a.topic_id AND co.partition_id = a.partition_id
          AND co.offset_value >= a.enqueue_seq)
    ORDER BY a.updated_at, a.consumer_group, tp.topic_name, a.partition_id, a.enqueue_seq
    LIMIT $3`,
  clear: `
    DELETE FROM ${t.deliveryAttempt} a USING ${t.topic} tp
    WHERE tp.id = a.topic_id AND a.consumer_group = $1 AND tp.topic_name = $2 AND a.partition_id = $3
      AND a.enqueue_seq = $4::bigint + 1`,
}))

const params = (k: AttemptKey) => [k.group, k.topic, k.partition, k.offset]

/** Failed attempts recorded for the message so far (0 when none). */
export async function readAttempts(db: Queryable, t: Tables, key: AttemptKey): Promise<{ attempts: number }> {
  const res = await run<{ attempts: number }>(db, sql(t).read, params(key))
  return { attempts: res.rows[0]?.attempts ?? 0 }
}

export async function recordAttempts(db: Queryable, t: Tables, key: AttemptKey, attempts: number, error: string): Promise<void> {
  await run(db, sql(t).record, [...params(key), attempts, error])
}

export async function clearAttempts(db: Queryable, t: Tables, key: AttemptKey): Promise<void> {
  await run(db, sql(t).clear, params(key))
}

/** A message that failed and waits for its next attempt. */
export interface FailingMessage extends AttemptKey {
  attempts: number
  /** `<error class>: <message>` of the last failure */
  lastError: string | null
  updatedAt: Date
}

export async function listAttempts(db: Queryable, t: Tables, filter: { group?: string; topic?: string; limit: number }): Promise<FailingMessage[]> {
  return (await run<FailingMessage>(db, sql(t).list, [filter.group ?? null, filter.topic ?? null, filter.limit])).rows
}
