// Runs maintenance periodically inside the app, or hands it to pg_cron. Every process may start a scheduler: the
// advisory lock makes all but one skip each round, and the jitter spreads their attempts.
import { createHash } from 'node:crypto'
import type { Tables } from '../db/tables.js'
import { cronCommand, cronVacuumCommand, probePgCron, scheduleCronJob } from '../store/maintenanceCron.js'
import { runMaintenance, type MaintenanceHost, type MaintenanceLogger, type MaintenanceOptions, type MaintenanceReport } from './run.js'

export type MaintenanceMode = 'in-app' | 'pg_cron' | 'off'

export interface MaintenanceHandle {
  readonly mode: MaintenanceMode
  /** Stops the timer; a run in progress is asked to stop after its current batch and awaited. */
  stop(): Promise<void>
}

export interface SchedulerOptions {
  /** default maintenance.intervalSeconds */
  intervalMs?: number
  /** delay before the first run; default a random point in the second half of min(interval, 5 min) */
  firstRunDelayMs?: number
  /** source of jitter, [0, 1) */
  random?: () => number
  run?: Omit<MaintenanceOptions, 'signal'>
  /** told about every in-app run's report (metrics) */
  onReport?: (report: MaintenanceReport) => void
}

const FIRST_RUN_CAP_MS = 300_000
/** each interval is stretched or shrunk by up to this fraction */
const JITTER = 0.1
/** leaves room for the `__vacuum` suffix of the second job */
const JOB_NAME_MAX = 92

/**
 * Starts maintenance for a connected context: pg_cron when maintenance.cronEnabled and the extension is installed
 * in this database, otherwise (maintenance.enabled) an in-app timer. Never throws: problems are logged.
 */
export async function startMaintenance(ctx: MaintenanceHost, opts: SchedulerOptions = {}): Promise<MaintenanceHandle> {
  const { maintenance } = ctx.config
  const log = ctx.logger.namespace('Maintenance')
  if (maintenance.cronEnabled) {
    if (await scheduleWithCron(ctx, log)) return { mode: 'pg_cron', stop: async () => {} }
    if (!maintenance.enabled) {
      log.warn('pg_cron unavailable and in-app maintenance disabled: no retention runs from this process')
    }
  }
  if (!maintenance.enabled) return { mode: 'off', stop: async () => {} }
  return startTimer(ctx, log, opts)
}

async function scheduleWithCron(ctx: MaintenanceHost, log: MaintenanceLogger): Promise<boolean> {
  const { maintenance } = ctx.config
  try {
    const probe = await probePgCron(ctx.db.pool)
    if (!probe.installed) {
      log.warn('maintenance.cronEnabled is set but pg_cron is not installed in this database; running maintenance in-app', {
        database: probe.database,
      })
      return false
    }
    const name = cronJobName(probe.database, ctx.tables)
    const schedule = cronSchedule(maintenance.intervalSeconds)
    const command = cronCommand(ctx.tables, maintenance.registrationExpirySeconds, maintenance.batchDeleteLimit)
    const id = await scheduleCronJob(ctx.db.pool, name, schedule, command)
    const vacuumId = await scheduleCronJob(ctx.db.pool, `${name}__vacuum`, schedule, cronVacuumCommand(ctx.tables))
    log.info('Maintenance scheduled with pg_cron', { job: name, jobId: id, vacuumJobId: vacuumId, schedule })
    return true
  } catch (err) {
    log.warn('Could not schedule maintenance with pg_cron; running it in-app', { error: (err as Error).message })
    return false
  }
}

function startTimer(ctx: MaintenanceHost, log: MaintenanceLogger, opts: SchedulerOptions): MaintenanceHandle {
  const intervalMs = opts.intervalMs ?? ctx.config.maintenance.intervalSeconds * 1000
  const random = opts.random ?? Math.random
  const abort = new AbortController()
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined

  const schedule = (delayMs: number) => {
    timer = setTimeout(tick, delayMs)
    timer.unref() // maintenance never keeps a process alive
  }
  const tick = () => {
    running = runMaintenance(ctx, { ...opts.run, signal: abort.signal })
      .then(
        (report) => {
          opts.onReport?.(report)
          if (!report.skipped && report.errors.length > 0) log.warn('Maintenance run had errors', { errors: report.errors })
        },
        (err: Error) => log.error('Maintenance run failed', { error: err.message }),
      )
      .finally(() => {
        running = undefined
        if (!abort.signal.aborted) schedule(intervalMs * (1 - JITTER + 2 * JITTER * random()))
      })
  }
  schedule(opts.firstRunDelayMs ?? Math.min(intervalMs, FIRST_RUN_CAP_MS) * (0.5 + 0.5 * random()))
  log.debug('In-app maintenance scheduled', { intervalMs })
  return {
    mode: 'in-app',
    async stop() {
      abort.abort()
      clearTimeout(timer)
      await running
    },
  }
}

/** pg_cron job name, unique per database + schema + prefix (hashed when long, as DataHub does). */
export function cronJobName(database: string, t: Tables): string {
  const clean = (s: string) => s.toLowerCase().replace(/[^a-z0-9_]/g, '_')
  const name = `kafkajs_pgqueue_maintenance__${clean(database)}__${clean(t.schema)}__${clean(t.prefix)}`
  if (name.length <= JOB_NAME_MAX) return name
  return `kafkajs_pgqueue_maintenance__h${createHash('sha256').update(name).digest('hex').slice(0, 12)}`
}

/** A cron expression close to the interval (60 s .. 30 days): every N minutes, hours or days, rounded. */
export function cronSchedule(intervalSeconds: number): string {
  const minutes = Math.max(1, Math.round(intervalSeconds / 60))
  if (minutes < 60) return `*/${minutes} * * * *`
  const hours = Math.round(minutes / 60)
  if (hours < 24) return `0 */${hours} * * *`
  return `0 0 */${Math.min(31, Math.round(hours / 24))} * *`
}
