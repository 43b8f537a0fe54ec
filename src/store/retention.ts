// Retention policies: each call is one bounded step of a plpgsql/SQL function from migrations/R__maintenance_*.sql,
// run in the caller's (autocommit) transaction. The rules themselves live in those scripts, next to the schema.
import { run, type Queryable } from '../db/database.js'
import { quoteIdent } from '../db/identifiers.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** A function of migrations/R__maintenance_*.sql, schema-qualified. */
export function maintenanceFunction(t: Tables, name: string): string {
  return `${quoteIdent(t.schema)}.${quoteIdent(`${t.prefix}_${name}`)}`
}

const sql = statements('retention', (t) => {
  const fn = (name: string) => maintenanceFunction(t, `maintenance_${name}`)
  return {
    dropCandidates: `SELECT partition_name AS name FROM ${fn('partition_candidates')}()`,
    dropPartition: `SELECT ${fn('drop_partition')}($1, $2) AS outcome`,
    batch: `
      SELECT deleted::int AS deleted, budget::text AS budget, state::text[] AS state
      FROM ${fn('retention_batch')}($1, $2, $3::int8[], $4::int8, $5, $6)`,
    aggressivePlan: `
      SELECT topic_id::text AS "topicId", partition_id AS partition, purge_through::text AS "purgeThrough",
             blocked_reason AS "blockedReason", blocked_group AS "blockedGroup"
      FROM ${fn('aggressive_plan')}($1)`,
  }
})

export type DropOutcome = 'dropped' | 'kept' | 'busy' | 'gone'

/** Message partitions whose range ended at least one partition width ago, oldest first. */
export async function partitionDropCandidates(db: Queryable, t: Tables): Promise<string[]> {
  return (await run<{ name: string }>(db, sql(t).dropCandidates)).rows.map((r) => r.name)
}

/**
 * Drops one candidate when every row in it is past its own topic's age retention; 'kept' when some row must stay
 * (it is then left to the row-level policies), 'busy' when the message table stayed locked for lockTimeoutMs.
 */
export async function dropExpiredPartition(db: Queryable, t: Tables, name: string, lockTimeoutMs: number): Promise<DropOutcome> {
  return (await run<{ outcome: DropOutcome }>(db, sql(t).dropPartition, [name, lockTimeoutMs])).rows[0].outcome
}

export type RetentionPolicy = 'age' | 'rowCap' | 'byteCap' | 'aggressive'

/** What one batch of a policy hands to the next batch of the same run (opaque to the caller). */
export interface RetentionCursor {
  /** per log partition, the seq through which rows are gone */
  state: string[] | null
  /** byteCap: payload bytes still over the cap */
  budget: string | null
}

export const FIRST_BATCH: RetentionCursor = { state: null, budget: null }

/**
 * One batch (at most `limit` rows) of a topic's retention policy: a prefix of each partition's log, oldest first
 * across partitions, never a partition's newest row. Pass the returned cursor to the next batch of the run.
 */
export async function retentionBatch(
  db: Queryable,
  t: Tables,
  policy: RetentionPolicy,
  topicId: string,
  cursor: RetentionCursor,
  limit: number,
  expirySeconds: number,
): Promise<{ deleted: number; cursor: RetentionCursor }> {
  const res = await run<{ deleted: number; budget: string | null; state: string[] | null }>(db, sql(t).batch, [
    policy,
    topicId,
    cursor.state,
    cursor.budget,
    limit,
    expirySeconds,
  ])
  const { deleted, budget, state } = res.rows[0]
  return { deleted, cursor: { state, budget } }
}

export interface AggressivePartition {
  topicId: string
  partition: number
  /** seq through which every registered group committed; null when blocked */
  purgeThrough: string | null
  blockedReason: string | null
  blockedGroup: string | null
}

/** Partitions of aggressive-retention topics with rows to purge, or rows held back by a blocker (for the report). */
export async function aggressivePlan(db: Queryable, t: Tables, expirySeconds: number): Promise<AggressivePartition[]> {
  return (await run<AggressivePartition>(db, sql(t).aggressivePlan, [expirySeconds])).rows
}
