import { run, type Database, type Queryable } from '../db/database.js'
import { isLockNotAvailable } from '../db/pgErrors.js'
import { observed } from '../db/roundTrips.js'
import type { Tables } from '../db/tables.js'
import { readRange, type ReadRange } from './readBounds.js'
import { statements } from './statement.js'
import { plannedWithoutSorts, transaction } from './transactions.js'

/**
 * One partition's commit. offset_value is the last processed seq, which equals the Kafka committed offset
 * (next offset to read). With `priorityPositions` (processed-through seq per priority 0..9) the stored offset is
 * the contiguous watermark across priorities, computed from the log; otherwise `offset` is stored as given.
 */
export interface OffsetCommit {
  topicId: string
  partition: number
  offset?: string
  priorityPositions?: readonly bigint[]
  metadata?: string | null
}

export interface CommittedOffset {
  topicId: string
  partition: number
  offset: string
  metadata: string | null
  priorityPositions: string[] | null
}

// $7: lock owner that must hold a live partition lease of generation $9 (null = no check; statement_timestamp()
// because inside a transaction, sendOffsets, now() is when the transaction began). $8: true = set exactly (seek,
// setOffsets, explicit commits may move back), false = only ever advance. The async form turns synchronous_commit off
// for this statement's own transaction only (set_config(..., true) lasts until its COMMIT): see
// docs/decisions/004-async-offset-commits.md.
// The next row of priority p above pos is asked for as "(priority, seq) > (p, pos) AND priority <= p ORDER BY
// priority, seq" rather than "priority = p AND seq > pos ORDER BY seq": the same rows, but only the dequeue index
// (topic, partition, priority, seq) yields that order. With the equality the planner may pick the unique (topic,
// partition, seq) index and filter on priority, reading every row above pos once per priority: it did on freshly
// filled partitions that autovacuum had not analyzed yet (150+ ms per commit instead of < 1 ms). `priority >= 0`
// (the column's CHECK) keeps the dequeue index the more selective one beside the enqueued_at range when a time
// partition has no statistics yet (see the fetch statement in fetch.ts, where the planner did pick the unique key).
// With `known` (every commit carries priorityPositions and the watermark `offset` the member worked out itself,
// src/consumer/readFloors.ts watermarkFor), no message row is read at all: the watermark is capped at the high
// watermark, and the commit touches the offset row, the ledger row and the lease row. The statement has no probe
// then, so its cached plan holds none of the message table's time partitions.
const commitStatement = (t: Tables, async: boolean, known = false) => `
    WITH c AS (
      SELECT c.* FROM unnest($2::int8[], $3::int4[], $4::int8[], $5::text[], $6::text[])
        AS c(topic_id, partition_id, off, meta, prio)${
          async
            ? `,
        (SELECT set_config('synchronous_commit', 'off', true)) AS cfg`
            : ''
        }
    ), w AS (
      SELECT c.topic_id, c.partition_id, c.meta, c.prio,
             CASE WHEN c.prio IS NULL THEN c.off ELSE LEAST(s.next_seq - 1, ${
               known
                 ? 'c.off'
                 : `(
               SELECT min(COALESCE(n.seq, s.next_seq) - 1)
               FROM unnest(c.prio::int8[]) WITH ORDINALITY AS p(pos, ord)
               LEFT JOIN LATERAL (
                 SELECT m.enqueue_seq AS seq FROM ${t.message} m
                 WHERE m.topic_id = c.topic_id AND m.partition_id = c.partition_id
                   AND (m.priority, m.enqueue_seq) > ((p.ord - 1)::int2, p.pos) AND m.priority <= (p.ord - 1)::int2 AND m.priority >= 0::int2
                   AND m.enqueued_at >= ${t.partitionFloor}($10::timestamptz) AND m.enqueued_at <= $11::timestamptz
                 ORDER BY m.priority, m.enqueue_seq LIMIT 1
               ) n ON true)`
             }) END AS off
      FROM c JOIN ${t.partitionSeq} s ON s.topic_id = c.topic_id AND s.partition_id = c.partition_id
      WHERE $7::text IS NULL OR EXISTS (
        SELECT 1 FROM ${t.partitionLease} l
        WHERE l.consumer_group = $1 AND l.topic_id = c.topic_id AND l.partition_id = c.partition_id
          AND l.lock_owner = $7 AND l.generation = $9 AND l.locked_until > statement_timestamp())
    )
    INSERT INTO ${t.consumerOffset} AS co (consumer_group, topic_id, partition_id, offset_value, metadata,
                                           priority_offsets, committed_at)
    SELECT $1, topic_id, partition_id, off, meta, prio::int8[], now() FROM w
    ON CONFLICT (consumer_group, topic_id, partition_id) DO UPDATE SET
      offset_value = CASE WHEN $8 THEN EXCLUDED.offset_value ELSE GREATEST(co.offset_value, EXCLUDED.offset_value) END,
      metadata = EXCLUDED.metadata,
      priority_offsets = EXCLUDED.priority_offsets,
      epoch = 0,
      reset_to = NULL,
      committed_at = now()
    RETURNING topic_id::text AS "topicId", partition_id AS partition, offset_value::text AS offset`

const sql = statements('offsets', (t) => ({
  // for the claim's own transaction only (is_local): how long it may wait for a row another transaction holds
  lockTimeout: `SELECT set_config('lock_timeout', $1, true)`,
  commit: commitStatement(t, false),
  commitAsync: commitStatement(t, true),
  commitKnown: commitStatement(t, false, true),
  commitKnownAsync: commitStatement(t, true, true),
  read: `
    SELECT topic_id::text AS "topicId", partition_id AS partition,
           CASE WHEN reset_to IS NOT NULL AND offset_value = start_offset THEN reset_to::text
                WHEN committed_at IS NULL AND offset_value = start_offset THEN '-1'
                ELSE offset_value::text END AS offset, metadata,
           priority_offsets::text[] AS "priorityPositions"
    FROM ${t.consumerOffset}
    WHERE consumer_group = $1 AND topic_id = ANY($2::int8[])`,
  // Where a member starts on partitions it just took: the committed offset (ours or DataHub's: offset_value), or for
  // a group that never committed (or was reset to a '-1'/'-2' marker since, see offsetResets.ts), the low
  // (fromBeginning) or high watermark, written once so every later owner starts there too. start_offset marks that
  // value as a start, not a commit (read reports it as -1 until it moves).
  // The outer SELECT sees the snapshot before the INSERT: new rows come from ins, existing ones from o.
  start: `
    WITH p AS (
      SELECT * FROM unnest($2::int8[], $3::int4[], $4::bool[]) AS p(topic_id, partition_id, from_beginning)
    ), w AS (
      SELECT p.*, s.next_seq - 1 AS high, COALESCE(f.first_seq, s.next_seq) - 1 AS low
      FROM p JOIN ${t.partitionSeq} s ON s.topic_id = p.topic_id AND s.partition_id = p.partition_id
      LEFT JOIN LATERAL (
        SELECT m.enqueue_seq AS first_seq FROM ${t.message} m
        WHERE m.topic_id = p.topic_id AND m.partition_id = p.partition_id
        ORDER BY m.enqueue_seq LIMIT 1
      ) f ON true
    ), ins AS (
      INSERT INTO ${t.consumerOffset} AS co (consumer_group, topic_id, partition_id, offset_value, start_offset)
      SELECT $1, topic_id, partition_id, o, o FROM w, LATERAL (SELECT CASE WHEN from_beginning THEN low ELSE high END) AS x(o)
      ON CONFLICT (consumer_group, topic_id, partition_id) DO UPDATE
        SET offset_value = EXCLUDED.offset_value, start_offset = EXCLUDED.start_offset, reset_to = NULL,
            priority_offsets = NULL, committed_at = NULL
        WHERE co.reset_to IS NOT NULL AND co.offset_value = co.start_offset
      RETURNING topic_id, partition_id, offset_value
    )
    SELECT w.topic_id::text AS "topicId", w.partition_id AS partition, w.high::text AS high, w.low::text AS low,
           COALESCE(ins.offset_value, o.offset_value)::text AS committed,
           CASE WHEN ins.topic_id IS NULL THEN o.priority_offsets::text[] END AS "priorityPositions"
    FROM w
    LEFT JOIN ins ON ins.topic_id = w.topic_id AND ins.partition_id = w.partition_id
    LEFT JOIN ${t.consumerOffset} o
      ON o.consumer_group = $1 AND o.topic_id = w.topic_id AND o.partition_id = w.partition_id`,
}))

export interface StartPosition {
  topicId: string
  partition: number
  high: string
  low: string
  committed: string
  priorityPositions: string[] | null
}

export interface StartClaim {
  topicId: string
  partition: number
  fromBeginning: boolean
}

/**
 * Start positions of partitions just taken. A partition whose offset row another transaction holds (the previous
 * owner's consume-transform-produce transaction, stalled between sendOffsets and COMMIT) is returned as `busy`
 * after waiting at most `lockTimeoutMs`, instead of holding up the member: its COMMIT decides where the partition
 * starts, and the member asks again at its next heartbeat. The others start at once.
 */
export async function claimStartPositions(
  db: Database,
  group: string,
  partitions: StartClaim[],
  lockTimeoutMs: number,
): Promise<{ positions: StartPosition[]; busy: StartClaim[] }> {
  if (partitions.length === 0) return { positions: [], busy: [] }
  const claim = (some: StartClaim[]) =>
    transaction(db, async (client) => {
      await run(client, sql(db.tables).lockTimeout, [String(Math.max(1, Math.round(lockTimeoutMs)))])
      const values = [group, some.map((p) => p.topicId), some.map((p) => p.partition), some.map((p) => p.fromBeginning)]
      return (await run<StartPosition>(client, sql(db.tables).start, values)).rows
    })
  const result = { positions: [] as StartPosition[], busy: [] as StartClaim[] }
  // all at once, the usual case; when one is held, one at a time so the others are not held up with it
  for (const some of [partitions, ...(partitions.length > 1 ? partitions.map((p) => [p]) : [])]) {
    try {
      result.positions.push(...(await claim(some)))
      if (some === partitions) return result
    } catch (e) {
      if (!isLockNotAvailable(e)) throw e
      if (some !== partitions || partitions.length === 1) result.busy.push(...some)
    }
  }
  return result
}

export async function commitOffsets(
  db: Queryable,
  t: Tables,
  group: string,
  commits: OffsetCommit[],
  opts: { lockOwner: string | null; generation?: number; exact: boolean; durable?: boolean; range?: ReadRange },
): Promise<Array<{ topicId: string; partition: number; offset: string }>> {
  const known = commits.length > 0 && commits.every((c) => c.priorityPositions && c.offset !== undefined)
  const statements = sql(t)
  const statement = known
    ? opts.durable === false
      ? statements.commitKnownAsync
      : statements.commitKnown
    : opts.durable === false
      ? statements.commitAsync
      : statements.commit
  const range = readRange(opts.range)
  const values = [
    group,
    commits.map((c) => c.topicId),
    commits.map((c) => c.partition),
    commits.map((c) => c.offset ?? null),
    commits.map((c) => c.metadata ?? null),
    commits.map((c) => (c.priorityPositions ? `{${c.priorityPositions.join(',')}}` : null)),
    opts.lockOwner,
    opts.exact,
    opts.generation ?? 0,
    range.lo,
    range.hi,
  ]
  type Row = { topicId: string; partition: number; offset: string }
  // $10, $11: the enqueued_at range of the watermark's probes (store/readBounds.ts). Bounded, the statement goes
  // unnamed, so it is planned with the range and only the time partitions in it are touched.
  if (known) return (await run<Row>(db, statement, values.slice(0, 9))).rows
  // the watermark's probes, planned so that stale statistics cannot make one read a whole band (transactions.ts)
  const res = await plannedWithoutSorts(db, (q) =>
    opts.range ? observed(q, statement.text, values, () => q.query<Row>({ text: statement.text, values })) : run<Row>(q, statement, values),
  )
  return res.rows
}

export async function readOffsets(db: Queryable, t: Tables, group: string, topicIds: string[]): Promise<CommittedOffset[]> {
  return (await run<CommittedOffset>(db, sql(t).read, [group, topicIds])).rows
}
