// Retention policies: each call is one bounded step of a plpgsql/SQL function from R__maintenance_functions.sql,
// run in the caller's (autocommit) transaction. The rules themselves live in that script, next to the schema.
import { run, type Queryable } from '../db/database.js'
import { quoteIdent } from '../db/identifiers.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** A function of R__maintenance_functions.sql, schema-qualified. */
export function maintenanceFunction(t: Tables, name: string): string {
  return `${quoteIdent(t.schema)}.${quoteIdent(`${t.prefix}_${name}`)}`
}

const sql = statements((t) => {
  const fn = (name: string) => maintenanceFunction(t, `maintenance_${name}`)
  return {
    dropCandidates: `SELECT partition_name AS name FROM ${fn('drop_candidates')}()`,
    dropPartition: `SELECT ${fn('drop_partition')}($1, $2) AS outcome`,
    byAge: `SELECT ${fn('delete_by_age')}($1, $2)::int AS deleted`,
    overRowCap: `SELECT ${fn('delete_over_row_cap')}($1, $2)::int AS deleted`,
    overByteCap: `SELECT ${fn('delete_over_byte_cap')}($1, $2)::int AS deleted`,
    aggressivePlan: `
      SELECT topic_id::text AS "topicId", partition_id AS partition, purge_through::text AS "purgeThrough",
             blocked_reason AS "blockedReason", blocked_group AS "blockedGroup"
      FROM ${fn('aggressive_plan')}($1)`,
    consumed: `SELECT ${fn('delete_consumed')}($1, $2, $3, $4)::int AS deleted`,
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

export type RowPolicy = 'age' | 'rowCap' | 'byteCap'

const POLICY_STATEMENT = { age: 'byAge', rowCap: 'overRowCap', byteCap: 'overByteCap' } as const

/** One batch (at most `limit` rows) of a topic's age, row-cap or byte-cap retention; returns rows deleted. */
export async function deleteBatch(db: Queryable, t: Tables, policy: RowPolicy, topicId: string, limit: number): Promise<number> {
  return (await run<{ deleted: number }>(db, sql(t)[POLICY_STATEMENT[policy]], [topicId, limit])).rows[0].deleted
}

export interface AggressivePartition {
  topicId: string
  partition: number
  /** seq through which every registered group committed; null when blocked */
  purgeThrough: string | null
  blockedReason: string | null
  blockedGroup: string | null
}

/** Partitions of aggressive-retention topics with rows to purge, or rows held back by a blocker. */
export async function aggressivePlan(db: Queryable, t: Tables, expirySeconds: number): Promise<AggressivePartition[]> {
  return (await run<AggressivePartition>(db, sql(t).aggressivePlan, [expirySeconds])).rows
}

/** One batch of a partition's rows that every registered group has committed; the bound is re-checked. */
export async function deleteConsumedBatch(
  db: Queryable,
  t: Tables,
  topicId: string,
  partition: number,
  expirySeconds: number,
  limit: number,
): Promise<number> {
  return (await run<{ deleted: number }>(db, sql(t).consumed, [topicId, partition, expirySeconds, limit])).rows[0].deleted
}
