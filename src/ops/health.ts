import type { PgQueueContext } from '../client/context.js'
import { consumerRegistryFor, type ConsumerRegistry, type ConsumersHealth } from './consumerRegistry.js'

export interface DatabaseHealth {
  reachable: boolean
  /** round trip of the probe, null when it failed */
  latencyMs: number | null
  error?: string
}

export interface HealthReport {
  status: 'UP' | 'DOWN'
  transport: 'pgqueue' | 'kafka'
  /** absent for the Kafka transport */
  database?: DatabaseHealth
  consumers: ConsumersHealth
}

export interface HealthOptions {
  /** default: the context's registry (consumers report into it, see trackConsumer) */
  consumers?: ConsumerRegistry
  /** a probe slower than this counts as unreachable; default 3000 ms */
  timeoutMs?: number
  /** DataHub's kafka.consumer.healthCheckEnabled: a crashed consumer makes the status DOWN; default true */
  consumerHealthCheck?: boolean
}

/** Probes the queue schema; never throws. */
export async function databaseHealth(ctx: PgQueueContext, timeoutMs = 3000): Promise<DatabaseHealth> {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([(async () => ctx.store.lag.probeLedger())(), timeout])
    return { reachable: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 }
  } catch (err) {
    return { reachable: false, latencyMs: null, error: (err as Error)?.message ?? String(err) }
  } finally {
    clearTimeout(timer)
  }
}

/** Combines a database report with the consumers' state into UP / DOWN (DataHub's PgQueuePollHealthIndicator). */
export function summarizeHealth(
  transport: HealthReport['transport'],
  database: DatabaseHealth | undefined,
  consumers: ConsumersHealth,
  consumerHealthCheck = true,
): HealthReport {
  const down = (database !== undefined && !database.reachable) || (consumerHealthCheck && !consumers.allAlive)
  const report: HealthReport = { status: down ? 'DOWN' : 'UP', transport, consumers }
  if (database) report.database = database
  return report
}

/** DOWN when PostgreSQL (or the queue schema) cannot be reached, or a tracked consumer crashed for good. */
export async function health(ctx: PgQueueContext, opts: HealthOptions = {}): Promise<HealthReport> {
  const consumers = (opts.consumers ?? consumerRegistryFor(ctx)).snapshot()
  return summarizeHealth('pgqueue', await databaseHealth(ctx, opts.timeoutMs), consumers, opts.consumerHealthCheck)
}
