// Maintenance housekeeping around the retention policies: the runner lock, the sequence ledger, orphaned lease
// rows, offsets stranded below deleted rows, delivery attempts the group is done with, expiry of silent
// registrations and members, and VACUUM.
import { run, type Queryable } from '../db/database.js'
import { quoteIdent } from '../db/identifiers.js'
import type { Tables } from '../db/tables.js'
import { maintenanceFunction } from './retention.js'
import { statements } from './statement.js'

const sql = statements('maintenance', (t) => {
  const fn = (name: string) => maintenanceFunction(t, `maintenance_${name}`)
  return {
    // Session-level: held across the run's many short transactions, on the connection that runs them.
    tryLock: `SELECT pg_try_advisory_lock(${fn('lock_key')}()) AS locked`,
    unlock: `SELECT pg_advisory_unlock(${fn('lock_key')}()) AS unlocked`,
    steps: `SELECT ${fn('steps')}() AS steps`,
    seedLedger: `SELECT ${fn('seed_ledger')}()::int AS seeded`,
    sweepLeases: `SELECT last_id::text AS "lastId", deleted::int AS deleted FROM ${fn('sweep_leases')}($1, $2)`,
    advanceOffsets: `SELECT ${fn('advance_offsets')}()::int AS advanced`,
    sweepAttempts: `SELECT ${fn('sweep_attempts')}($1)::int AS deleted`,
    expireRegistrations: `
      SELECT consumer_group AS "group", topic_name AS topic, last_heartbeat_at AS "lastHeartbeatAt"
      FROM ${fn('expire_registrations')}($1)`,
    expireMembers: `
      SELECT members::int, partition_leases::int AS "partitionLeases", producer_sequences::int AS "producerSequences"
      FROM ${fn('expire_members')}($1)`,
    // Partitions that can hold rows (range started); premade future ones are empty.
    vacuumTargets: `
      SELECT c.relname AS name
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass
        AND COALESCE(substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \\(''([^'']+)''\\)')::timestamptz <= now(), true)
      ORDER BY c.relname`,
  }
})

/** Takes the schema + prefix's maintenance lock for this session; false when another runner holds it. */
export async function tryMaintenanceLock(db: Queryable, t: Tables): Promise<boolean> {
  return (await run<{ locked: boolean }>(db, sql(t).tryLock)).rows[0].locked
}

export async function releaseMaintenanceLock(db: Queryable, t: Tables): Promise<boolean> {
  return (await run<{ unlocked: boolean }>(db, sql(t).unlock)).rows[0].unlocked
}

/** The steps of a run, in order, as R__maintenance_5_drivers.sql declares them for every runner. */
export async function maintenanceSteps(db: Queryable, t: Tables): Promise<string[]> {
  return (await run<{ steps: string[] }>(db, sql(t).steps)).rows[0].steps
}

/** Ledger rows for partitions without one, seeded past their stored rows; returns how many were added. */
export async function seedSequenceLedger(db: Queryable, t: Tables): Promise<number> {
  return (await run<{ seeded: number }>(db, sql(t).seedLedger)).rows[0].seeded
}

/** One page of the lease/ack table by id: deletes rows whose message is gone. `lastId` is null past the end. */
export async function sweepOrphanLeases(
  db: Queryable,
  t: Tables,
  afterId: string,
  limit: number,
): Promise<{ lastId: string | null; deleted: number }> {
  return (await run<{ lastId: string | null; deleted: number }>(db, sql(t).sweepLeases, [afterId, limit])).rows[0]
}

/** Moves offsets that sit below deleted rows up to the next stored row; returns how many moved. */
export async function advanceStrandedOffsets(db: Queryable, t: Tables): Promise<number> {
  return (await run<{ advanced: number }>(db, sql(t).advanceOffsets)).rows[0].advanced
}

/** Deletes at most `limit` delivery-attempt rows whose group is done with their message; returns how many. */
export async function sweepDeliveryAttempts(db: Queryable, t: Tables, limit: number): Promise<number> {
  return (await run<{ deleted: number }>(db, sql(t).sweepAttempts, [limit])).rows[0].deleted
}

export interface ExpiredRegistration {
  group: string
  topic: string
  lastHeartbeatAt: Date
}

/** Deletes consumer registrations silent longer than expirySeconds (0 = never) and returns them. */
export async function expireRegistrations(db: Queryable, t: Tables, expirySeconds: number): Promise<ExpiredRegistration[]> {
  return (await run<ExpiredRegistration>(db, sql(t).expireRegistrations, [expirySeconds])).rows
}

export interface ExpiredMembers {
  members: number
  partitionLeases: number
  producerSequences: number
}

/** Deletes group members, partition leases and idempotent-producer state silent longer than expirySeconds. */
export async function expireMembers(db: Queryable, t: Tables, expirySeconds: number): Promise<ExpiredMembers> {
  return (await run<ExpiredMembers>(db, sql(t).expireMembers, [expirySeconds])).rows[0]
}

/** Qualified names of the message partitions whose range has started, i.e. every one that can hold rows. */
export async function vacuumTargets(db: Queryable, t: Tables): Promise<string[]> {
  const res = await run<{ name: string }>(db, sql(t).vacuumTargets, [t.message])
  return res.rows.map((r) => `${quoteIdent(t.schema)}.${quoteIdent(r.name)}`)
}

/**
 * VACUUM of one table (qualified, quoted name: a partition or t.messageGroupLease), skipped when locked. Not a
 * prepared statement: the name is an identifier, and VACUUM must run outside any transaction block.
 */
export async function vacuumTable(db: Queryable, qualifiedName: string): Promise<void> {
  await db.query(`VACUUM (SKIP_LOCKED) ${qualifiedName}`)
}
