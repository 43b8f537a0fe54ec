import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

export interface PartitionRef {
  topicId: string
  partition: number
}

/** A lease this member holds; `fresh` = just taken (not a renewal of a lease it held without a break). */
export interface HeldLease extends PartitionRef {
  fresh: boolean
}

const sql = statements('leases', (t) => ({
  // Takes or renews leases, stamped with the group generation $6, and only while $6 is the group's current one: a
  // lease is taken over only once its holder let it lapse, so a partition is never fetched by two members of one
  // group at the same time. acquired_at moves only when the lease is taken (not renewed without a break), so
  // `fresh` tells the holder that someone else may have held the partition meanwhile.
  acquire: `
    INSERT INTO ${t.partitionLease} AS pl (consumer_group, topic_id, partition_id, lock_owner, locked_until, generation, acquired_at)
    SELECT $1, x.topic_id, x.partition_id, $2, now() + $3 * interval '1 millisecond', $6, now()
    FROM unnest($4::int8[], $5::int4[]) AS x(topic_id, partition_id)
    WHERE EXISTS (SELECT 1 FROM ${t.groupGeneration} g WHERE g.consumer_group = $1 AND g.generation = $6)
    ON CONFLICT (consumer_group, topic_id, partition_id) DO UPDATE
      SET lock_owner = EXCLUDED.lock_owner, locked_until = EXCLUDED.locked_until, generation = EXCLUDED.generation,
          acquired_at = CASE WHEN pl.lock_owner = EXCLUDED.lock_owner AND pl.locked_until >= now() THEN pl.acquired_at ELSE now() END
      WHERE pl.lock_owner = EXCLUDED.lock_owner OR pl.locked_until < now()
    RETURNING topic_id::text AS "topicId", partition_id AS partition, acquired_at = now() AS fresh`,
  // Locks this member's live leases of this generation until the caller's transaction ends (a transactional
  // offset commit): nobody can take them over between this check and COMMIT, and a takeover waits for it.
  // clock_timestamp(), not now(): inside a transaction now() is when it began.
  lockHeld: `
    SELECT topic_id::text AS "topicId", partition_id AS partition FROM ${t.partitionLease}
    WHERE consumer_group = $1 AND lock_owner = $2 AND generation = $3 AND locked_until > clock_timestamp()
      AND (topic_id, partition_id) IN (SELECT * FROM unnest($4::int8[], $5::int4[]))
    FOR UPDATE`,
  release: `
    DELETE FROM ${t.partitionLease}
    WHERE consumer_group = $1 AND lock_owner = $2
      AND (topic_id, partition_id) IN (SELECT * FROM unnest($3::int8[], $4::int4[]))`,
}))

export async function acquireLeases(
  db: Queryable,
  t: Tables,
  owner: { group: string; lockOwner: string; generation: number },
  lifetimeMs: number,
  partitions: PartitionRef[],
): Promise<HeldLease[]> {
  if (partitions.length === 0) return []
  const res = await run<HeldLease>(db, sql(t).acquire, [
    owner.group,
    owner.lockOwner,
    lifetimeMs,
    partitions.map((p) => p.topicId),
    partitions.map((p) => p.partition),
    owner.generation,
  ])
  return res.rows
}

/** Inside a transaction: the partitions of `partitions` this owner holds in this generation, locked until it ends. */
export async function lockHeldLeases(
  db: Queryable,
  t: Tables,
  owner: { group: string; lockOwner: string; generation: number },
  partitions: PartitionRef[],
): Promise<PartitionRef[]> {
  if (partitions.length === 0) return []
  const res = await run<PartitionRef>(db, sql(t).lockHeld, [
    owner.group,
    owner.lockOwner,
    owner.generation,
    partitions.map((p) => p.topicId),
    partitions.map((p) => p.partition),
  ])
  return res.rows
}

export async function releaseLeases(db: Queryable, t: Tables, group: string, lockOwner: string, partitions: PartitionRef[]): Promise<void> {
  if (partitions.length === 0) return
  await run(db, sql(t).release, [group, lockOwner, partitions.map((p) => p.topicId), partitions.map((p) => p.partition)])
}
