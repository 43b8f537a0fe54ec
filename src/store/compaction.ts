// Log compaction (docs/compaction.md): each call is one bounded batch of a function of
// migrations/R__maintenance_6_compaction.sql, run in the caller's (autocommit) transaction.
import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { maintenanceFunction } from './retention.js'
import { statements } from './statement.js'

/** Kafka's cleanup.policy, read as the broker does: a comma-separated list of `delete` and `compact`. */
export function cleanupPolicy(config: Record<string, string> | null | undefined): { compact: boolean; delete: boolean } {
  const parts = (config?.['cleanup.policy'] ?? 'delete')
    .toLowerCase()
    .split(',')
    .map((p) => p.trim())
  return { compact: parts.includes('compact'), delete: parts.includes('delete') }
}

const sql = statements('compaction', (t) => {
  const fn = (name: string) => maintenanceFunction(t, `maintenance_${name}`)
  return {
    plan: `SELECT topic_id::text AS "topicId", topic_name AS topic, partition_id AS partition FROM ${fn('compaction_plan')}()`,
    batch: `
      SELECT scanned::int, deleted::int, tombstones::int, more
      FROM ${fn('compaction_batch')}($1, $2, $3, $4)`,
  }
})

export interface CompactionTarget {
  topicId: string
  topic: string
  partition: number
}

/** Every log partition of a topic whose cleanup.policy contains compact. */
export async function compactionPlan(db: Queryable, t: Tables): Promise<CompactionTarget[]> {
  return (await run<CompactionTarget>(db, sql(t).plan)).rows
}

export interface CompactionBatch {
  /** rows added to the key map */
  scanned: number
  /** rows deleted (superseded, keyless, or expired tombstones) */
  deleted: number
  /** expired tombstones among them: their key is gone */
  tombstones: number
  /** another call has work to do now */
  more: boolean
}

/** One batch (at most `limit` rows read) of compaction for one log partition. */
export async function compactionBatch(
  db: Queryable,
  t: Tables,
  target: CompactionTarget,
  limit: number,
  expirySeconds: number,
): Promise<CompactionBatch> {
  return (await run<CompactionBatch>(db, sql(t).batch, [target.topicId, target.partition, limit, expirySeconds])).rows[0]
}
