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

const sql = statements('deliveryAttempts', (t) => {
  /** the group's committed offset is past the message of seq `seq` */
  const past = (topicId: string, partition: string, seq: string, group = '$1') => `
    SELECT 1 FROM ${t.consumerOffset} co
    WHERE co.consumer_group = ${group} AND co.topic_id = ${topicId} AND co.partition_id = ${partition} AND co.offset_value >= ${seq}`
  return {
    read: `
    SELECT a.attempts FROM ${t.deliveryAttempt} a JOIN ${t.topic} tp ON tp.id = a.topic_id
    WHERE a.consumer_group = $1 AND tp.topic_name = $2 AND a.partition_id = $3 AND a.enqueue_seq = $4::bigint + 1`,
    // the count only grows: two members racing on one message (a rebalance) cannot lower it
    record: `
    INSERT INTO ${t.deliveryAttempt} AS a (consumer_group, topic_id, partition_id, enqueue_seq, attempts, last_error)
    SELECT $1, tp.id, $3, $4::bigint + 1, $5, $6 FROM ${t.topic} tp WHERE tp.topic_name = $2
    ON CONFLICT (consumer_group, topic_id, partition_id, enqueue_seq) DO UPDATE
      SET attempts = GREATEST(a.attempts, EXCLUDED.attempts), last_error = EXCLUDED.last_error, updated_at = now()`,
    // In the move's transaction (to the dead-letter or a retry topic): marks the message moved, unless it was moved
    // already or the group's committed offset is past it (a marked row is swept once the group is past it). Two
    // moves of one message serialize on the row: the second one finds the first's mark once it committed.
    claimMove: `
    INSERT INTO ${t.deliveryAttempt} AS a (consumer_group, topic_id, partition_id, enqueue_seq, attempts, last_error, moved_at)
    SELECT $1, tp.id, $3, $4::bigint + 1, $5, $6, now() FROM ${t.topic} tp
    WHERE tp.topic_name = $2 AND NOT EXISTS (${past('tp.id', '$3', '$4::bigint + 1')})
    ON CONFLICT (consumer_group, topic_id, partition_id, enqueue_seq) DO UPDATE
      SET attempts = GREATEST(a.attempts, EXCLUDED.attempts), last_error = EXCLUDED.last_error, moved_at = now(), updated_at = now()
      WHERE a.moved_at IS NULL
    RETURNING 1 AS claimed`,
    // whether a message is done for the group: moved (marked) or committed past
    done: `
    SELECT EXISTS (
        SELECT 1 FROM ${t.deliveryAttempt} a
        WHERE a.consumer_group = $1 AND a.topic_id = tp.id AND a.partition_id = $3 AND a.enqueue_seq = $4::bigint + 1
          AND a.moved_at IS NOT NULL)
      OR EXISTS (${past('tp.id', '$3', '$4::bigint + 1')}) AS done
    FROM ${t.topic} tp WHERE tp.topic_name = $2`,
    // messages failing right now, oldest first. A row lives until its message succeeds or is moved in the process
    // that failed it; one whose message the group has committed since (it succeeded in another member after a
    // rebalance or a crash) is not failing any more and is left out (and swept by maintenance).
    list: `
    SELECT a.consumer_group AS "group", tp.topic_name AS topic, a.partition_id AS partition,
           (a.enqueue_seq - 1)::text AS "offset", a.attempts, a.last_error AS "lastError", a.updated_at AS "updatedAt"
    FROM ${t.deliveryAttempt} a JOIN ${t.topic} tp ON tp.id = a.topic_id
    WHERE ($1::text IS NULL OR a.consumer_group = $1) AND ($2::text IS NULL OR tp.topic_name = $2) AND a.moved_at IS NULL
      AND NOT EXISTS (${past('a.topic_id', 'a.partition_id', 'a.enqueue_seq', 'a.consumer_group')})
    ORDER BY a.updated_at, a.consumer_group, tp.topic_name, a.partition_id, a.enqueue_seq
    LIMIT $3`,
    // a failing message got through (a moved one's mark stays until the group is past it)
    clear: `
    DELETE FROM ${t.deliveryAttempt} a USING ${t.topic} tp
    WHERE tp.id = a.topic_id AND a.consumer_group = $1 AND tp.topic_name = $2 AND a.partition_id = $3
      AND a.enqueue_seq = $4::bigint + 1 AND a.moved_at IS NULL`,
  }
})

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

/**
 * Inside the move's transaction: marks the message moved. False when it was moved already, or the group is past
 * it: the move must not happen (the caller aborts its transaction).
 */
export async function claimMove(db: Queryable, t: Tables, key: AttemptKey, attempts: number, error: string): Promise<boolean> {
  return (await run(db, sql(t).claimMove, [...params(key), attempts, error])).rows.length > 0
}

/** Whether the group is done with the message: it was moved (marked), or the group's committed offset is past it. */
export async function isDone(db: Queryable, t: Tables, key: AttemptKey): Promise<boolean> {
  return (await run<{ done: boolean }>(db, sql(t).done, params(key))).rows[0]?.done ?? false
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
