// pg_cron scheduling of the SQL maintenance driver (the __PGQUEUE_PREFIX___run_maintenance procedure).
import type { Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { maintenanceFunction } from './retention.js'

export interface CronProbe {
  /** pg_cron is installed in this database (so cron.schedule runs jobs here) */
  installed: boolean
  database: string
}

export async function probePgCron(db: Queryable): Promise<CronProbe> {
  const res = await db.query<CronProbe>(
    `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_cron') AS installed, current_database() AS database`,
  )
  return res.rows[0]
}

/** The command the job runs: one CALL, which pg_cron runs outside a transaction block so the procedure can commit. */
export function cronCommand(t: Tables, expirySeconds: number, batchDeleteLimit: number): string {
  const proc = maintenanceFunction(t, 'run_maintenance')
  return `CALL ${proc}(p_expiry_seconds => ${Math.trunc(expirySeconds)}, p_batch => ${Math.trunc(batchDeleteLimit)})`
}

/**
 * VACUUM of the message partitions (through the parent) and the lease table, as a job of its own: a procedure
 * cannot run VACUUM, and deleted rows' space is only reused once it has run.
 */
export function cronVacuumCommand(t: Tables): string {
  return `VACUUM (SKIP_LOCKED) ${t.message}, ${t.messageGroupLease}`
}

/** Creates or updates (same name) the job; returns its id. */
export async function scheduleCronJob(db: Queryable, name: string, schedule: string, command: string): Promise<string> {
  const res = await db.query<{ id: string }>('SELECT cron.schedule($1, $2, $3)::text AS id', [name, schedule, command])
  return res.rows[0].id
}
