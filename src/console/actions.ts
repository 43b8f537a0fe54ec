// What the console changes, always through the library's own APIs: offsets through the admin's setOffsets (which,
// as KafkaJS's, refuses while the group has running members), test messages through a producer, maintenance
// through runMaintenance. The offset reset is computed first and shown (dry run) before it is applied.
import type { Admin, Producer } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { runMaintenance } from '../maintenance/run.js'
import { badRequest } from '../ops/errors.js'

export type ResetTarget = 'earliest' | 'latest' | 'timestamp' | 'offset'
export const RESET_TARGETS: readonly ResetTarget[] = ['earliest', 'latest', 'timestamp', 'offset']

export interface ResetPlanRequest {
  group: string
  topic: string
  to: ResetTarget
  /** ms, for 'timestamp' */
  timestamp?: number
  /** for 'offset': clamped into each partition's [low, high] as Kafka's reset tool does */
  offset?: string
  /** only this partition; default every partition */
  partition?: number
}

export interface PlannedReset {
  partition: number
  /** committed offset now; null when the group has none */
  current: string | null
  target: string
  low: string
  high: string
}

const clamp = (v: bigint, low: bigint, high: bigint) => (v < low ? low : v > high ? high : v)

/** The offsets a reset would write, resolved to numbers now (not '-1'/'-2' markers): what the preview shows is what is written. */
export async function planReset(admin: Admin, req: ResetPlanRequest): Promise<PlannedReset[]> {
  if (req.to === 'timestamp' && req.timestamp === undefined) badRequest('a reset to a timestamp needs timestamp (ms)')
  if (req.to === 'offset' && req.offset === undefined) badRequest('a reset to an offset needs offset')
  const [marks, [committed], byTime] = await Promise.all([
    admin.fetchTopicOffsets(req.topic),
    admin.fetchOffsets({ groupId: req.group, topics: [req.topic] }),
    req.to === 'timestamp' ? admin.fetchTopicOffsetsByTimestamp(req.topic, req.timestamp) : Promise.resolve([]),
  ])
  const current = new Map(committed!.partitions.map((p) => [p.partition, p.offset]))
  const atTime = new Map(byTime.map((p) => [p.partition, p.offset]))
  return marks
    .filter((m) => req.partition === undefined || m.partition === req.partition)
    .map((m) => {
      const low = BigInt(m.low)
      const high = BigInt(m.high)
      const target = {
        earliest: low,
        latest: high,
        timestamp: BigInt(atTime.get(m.partition) ?? m.high),
        offset: clamp(BigInt(req.offset ?? 0), low, high),
      }[req.to]
      const now = current.get(m.partition)
      return { partition: m.partition, current: now === undefined || now === '-1' ? null : now, target: target.toString(), low: m.low, high: m.high }
    })
}

export async function applyReset(admin: Admin, req: ResetPlanRequest): Promise<PlannedReset[]> {
  const plan = await planReset(admin, req)
  if (plan.length === 0) badRequest(`topic "${req.topic}" has no partition ${req.partition}`)
  await admin.setOffsets({ groupId: req.group, topic: req.topic, partitions: plan.map((p) => ({ partition: p.partition, offset: p.target })) })
  return plan
}

export interface TestMessage {
  topic: string
  partition?: number
  key?: string
  value: string
  headers?: Record<string, string>
}

export async function produceTestMessage(producer: Producer, m: TestMessage): Promise<{ partition: number; offset: string }> {
  const [meta] = await producer.send({
    topic: m.topic,
    messages: [{ partition: m.partition, key: m.key ?? null, value: m.value, headers: m.headers }],
  })
  return { partition: meta!.partition, offset: meta!.baseOffset ?? '' }
}

/** One run now; the summary the console shows (the full report is in the maintenance log and /metrics). */
export async function maintenanceNow(ctx: PgQueueContext): Promise<Record<string, unknown>> {
  const report = await runMaintenance(ctx)
  if (report.skipped) return { skipped: true, reason: 'another runner holds the maintenance lock' }
  const { durationMs, partitionsCreated, deleted, partitions, leasesSwept, offsetsAdvanced, errors } = report
  return { skipped: false, durationMs, partitionsCreated, deleted, dropped: partitions.dropped.length, leasesSwept, offsetsAdvanced, errors }
}
