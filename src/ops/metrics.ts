// Prometheus metrics (prom-client). Names follow OpenTelemetry's messaging conventions with dots turned into
// underscores, as Micrometer exports DataHub's own timers: `messaging.queue.time` becomes messaging_queue_time_seconds
// with the labels messaging_system, topic, consumer_group and messaging_priority (the WFQ band index).
import type { Counter, Histogram, Registry } from 'prom-client'
import { lazyModule } from '../lazyModule.js'
import type { MaintenanceReport, PolicyCounts } from '../maintenance/run.js'
import type { BatchObservation } from './hooks.js'
import type { GroupLag } from './lag.js'

type ConsumerLabels = 'messaging_system' | 'topic' | 'consumer_group'

export interface MetricsOptions {
  /** the messaging_system label; default 'pgqueue' */
  messagingSystem?: string
  /** told about a lag collection that failed (the lag gauges are then empty) */
  onCollectError?: (err: unknown) => void
  /** also register prom-client's default Node.js process metrics (CPU, memory, event loop lag, GC) */
  processMetrics?: boolean
}

export interface PgQueueMetrics {
  readonly registry: Registry
  readonly messagingSystem: string
  readonly produced: Counter<'messaging_system' | 'topic'>
  readonly produceErrors: Counter<'messaging_system' | 'topic'>
  readonly consumed: Counter<ConsumerLabels>
  readonly handlerDuration: Histogram<ConsumerLabels>
  readonly queueTime: Histogram<ConsumerLabels | 'messaging_priority'>
  readonly crashes: Counter<'messaging_system' | 'consumer_group' | 'restart'>
  /** the dead-letter extension: handler attempts that failed and will be retried */
  readonly retries: Counter<ConsumerLabels>
  /** the dead-letter extension: messages moved to a dead-letter topic */
  readonly deadLettered: Counter<ConsumerLabels>
  /** the runner's batch observer: enqueue-to-handler time per message */
  observeBatch(observation: BatchObservation): void
  /** counts one maintenance run's results */
  recordMaintenance(report: MaintenanceReport): void
  /** where the lag gauges read from on each scrape (consumerLag of a connected context); undefined stops it */
  setLagSource(source: (() => Promise<GroupLag[]>) | undefined): void
}

const promClient = lazyModule<typeof import('prom-client')>('prom-client')

const SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
const QUEUE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]
const POLICY_LABELS: Record<keyof PolicyCounts, string> = { age: 'age', rowCap: 'row_cap', byteCap: 'byte_cap', aggressive: 'aggressive' }

/** One set of metrics in `registry` (default: a fresh one, so two servers or tests never share series). */
export function createMetrics(registry?: Registry, options: MetricsOptions = {}): PgQueueMetrics {
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = promClient()
  registry ??= new Registry()
  if (options.processMetrics) collectDefaultMetrics({ register: registry })
  const system = options.messagingSystem ?? 'pgqueue'
  const registers = [registry]
  const consumerLabels = ['messaging_system', 'topic', 'consumer_group'] as const
  let lagSource: (() => Promise<GroupLag[]>) | undefined

  const produced = new Counter({
    name: 'messaging_client_sent_messages_total',
    help: 'Messages sent by producers, per topic',
    labelNames: ['messaging_system', 'topic'] as const,
    registers,
  })
  const produceErrors = new Counter({
    name: 'messaging_client_send_errors_total',
    help: 'Messages whose send failed, per topic',
    labelNames: ['messaging_system', 'topic'] as const,
    registers,
  })
  const consumed = new Counter({
    name: 'messaging_client_consumed_messages_total',
    help: 'Messages handed to consumer handlers, per topic and consumer group',
    labelNames: consumerLabels,
    registers,
  })
  const handlerDuration = new Histogram({
    name: 'messaging_process_duration_seconds',
    help: 'Time the handler spent on one batch (eachBatch, or the eachMessage calls of one fetched batch)',
    labelNames: consumerLabels,
    buckets: SECONDS_BUCKETS,
    registers,
  })
  const queueTime = new Histogram({
    name: 'messaging_queue_time_seconds',
    help: 'Time from enqueue to the start of the handler, per message (DataHub messaging.queue.time)',
    labelNames: [...consumerLabels, 'messaging_priority'] as const,
    buckets: QUEUE_BUCKETS,
    registers,
  })
  const crashes = new Counter({
    name: 'messaging_consumer_crashes_total',
    help: 'Consumer crashes, by whether the consumer restarts',
    labelNames: ['messaging_system', 'consumer_group', 'restart'] as const,
    registers,
  })

  const retries = new Counter({
    name: 'messaging_client_retries_total',
    help: 'Failed handler attempts the dead-letter extension retries, per topic and consumer group',
    labelNames: consumerLabels,
    registers,
  })
  const deadLettered = new Counter({
    name: 'messaging_client_dead_lettered_messages_total',
    help: 'Messages moved to a dead-letter topic after their last attempt, per (original) topic and consumer group',
    labelNames: consumerLabels,
    registers,
  })

  // The lag gauges are read from one query per scrape: prom-client gathers metrics concurrently, so every gauge's
  // collect awaits the same refresh.
  const lagLabels = ['messaging_system', 'consumer_group', 'topic'] as const
  let refreshing: Promise<void> | undefined
  const refresh = () =>
    (refreshing ??= collectLag().finally(() => {
      refreshing = undefined
    }))
  const lag = new Gauge({
    name: 'messaging_consumer_lag',
    help: 'Messages between the committed offset and the high watermark, summed over the partitions of a topic',
    labelNames: lagLabels,
    registers,
    collect: refresh,
  })
  const stuckAhead = new Gauge({
    name: 'messaging_consumer_stuck_ahead_partitions',
    help: 'Partitions whose committed offset is past the high watermark (STUCK_AHEAD)',
    labelNames: lagLabels,
    registers,
    collect: refresh,
  })
  const lagCollected = new Gauge({
    name: 'messaging_consumer_lag_collection_success',
    help: '1 when the last lag collection read the database, 0 when it failed',
    registers,
    collect: refresh,
  })
  async function collectLag(): Promise<void> {
    lag.reset()
    stuckAhead.reset()
    if (!lagSource) return
    try {
      for (const g of await lagSource()) {
        for (const t of g.topics) {
          const labels = { messaging_system: system, consumer_group: g.group, topic: t.topic }
          lag.set(labels, Number(t.totalLag))
          stuckAhead.set(labels, t.stuckAhead)
        }
      }
      lagCollected.set(1)
    } catch (err) {
      lagCollected.set(0)
      options.onCollectError?.(err)
    }
  }

  const maintenanceRuns = new Counter({
    name: 'pgqueue_maintenance_runs_total',
    help: 'Maintenance runs by outcome: completed, failed (a step had errors) or skipped (another runner held the lock)',
    labelNames: ['outcome'] as const,
    registers,
  })
  const maintenanceDeleted = new Counter({
    name: 'pgqueue_maintenance_deleted_messages_total',
    help: 'Messages deleted by maintenance, per retention policy',
    labelNames: ['policy'] as const,
    registers,
  })
  const maintenanceDropped = new Counter({
    name: 'pgqueue_maintenance_partitions_dropped_total',
    help: 'Expired message partitions dropped by maintenance',
    registers,
  })
  const maintenanceDuration = new Histogram({
    name: 'pgqueue_maintenance_duration_seconds',
    help: 'Duration of completed maintenance runs',
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900],
    registers,
  })

  return {
    registry,
    messagingSystem: system,
    produced,
    produceErrors,
    consumed,
    handlerDuration,
    queueTime,
    crashes,
    retries,
    deadLettered,
    observeBatch(o) {
      for (let i = 0; i < o.count; i++) {
        const labels = { messaging_system: system, topic: o.topic, consumer_group: o.groupId, messaging_priority: String(o.bands[i] ?? '') }
        // enqueued_at is the database's clock, startedAt ours: clamp small negative skews to 0
        queueTime.observe(labels, Math.max(0, o.startedAt - o.enqueueTimestamps[i]!) / 1000)
      }
    },
    recordMaintenance(report) {
      if (report.skipped) return void maintenanceRuns.inc({ outcome: 'skipped' })
      maintenanceRuns.inc({ outcome: report.errors.length > 0 ? 'failed' : 'completed' })
      for (const [policy, label] of Object.entries(POLICY_LABELS)) {
        maintenanceDeleted.inc({ policy: label }, report.deleted[policy as keyof PolicyCounts])
      }
      maintenanceDropped.inc(report.partitions.dropped.length)
      maintenanceDuration.observe(report.durationMs / 1000)
    },
    setLagSource(source) {
      lagSource = source
    },
  }
}
