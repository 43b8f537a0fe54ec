import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

export interface PartitionRef {
  topicId: string
  partition: number
}

const sql = statements((t) => ({
  // Takes or renews leases: a lease is taken over only once its holder let it lapse, so a partition is never
  // fetched by two members of one group at the same time. Returns the partitions this owner now holds.
  acquire: `
    INSERT INTO ${t.partitionLease} AS pl (consumer_group, topic_id, partition_id, lock_owner, locked_until)
    SELECT $1, x.topic_id, x.partition_id, $2, now() + $3 * interval '1 millisecond'
    FROM unnest($4::int8[], $5::int4[]) AS x(topic_id, partition_id)
    ON CONFLICT (consumer_group, topic_id, partition_id) DO UPDATE
      SET lock_owner = EXCLUDED.lock_owner, locked_until = EXCLUDED.locked_until
      WHERE pl.lock_owner = EXCLUDED.lock_owner OR pl.locked_until < now()
    RETURNING topic_id::text AS "topicId", partition_id AS partition`,
  release: `
    DELETE FROM ${t.partitionLease}
    WHERE consumer_group = $1 AND lock_owner = $2
      AND (topic_id, partition_id) IN (SELECT * FROM unnest($3::int8[], $4::int4[]))`,
}))

export async function acquireLeases(
  db: Queryable,
  t: Tables,
  group: string,
  lockOwner: string,
  lifetimeMs: number,
  partitions: PartitionRef[],
): Promise<PartitionRef[]> {
  if (partitions.length === 0) return []
  const res = await run<PartitionRef>(db, sql(t).acquire, [
    group,
    lockOwner,
    lifetimeMs,
    partitions.map((p) => p.topicId),
    partitions.map((p) => p.partition),
  ])
  return res.rows
}

export async function releaseLeases(
  db: Queryable,
  t: Tables,
  group: string,
  lockOwner: string,
  partitions: PartitionRef[],
): Promise<void> {
  if (partitions.length === 0) return
  await run(db, sql(t).release, [group, lockOwner, partitions.map((p) => p.topicId), partitions.map((p) => p.partition)])
}
