// Topics for the console: the list (watermarks of every partition in one statement) and one topic's page (stored
// rows and bytes per partition, effective retention settings). The produce rate is the browser's: it samples `high`.
import type { PgQueueContext } from '../client/context.js'
import { effectiveEntries, type EffectiveEntry } from '../admin/topicSettings.js'
import { requireTopic, partitionWatermarks } from '../admin/lookup.js'
import type { TopicRow } from '../store/topics.js'

export interface TopicSummary {
  name: string
  partitions: number
  /** offsets in the logs: sum of high - low */
  messages: string
  /** sum of the high watermarks: the browser's produce rate is its rate of change */
  high: string
  retention: Retention
}

export interface Retention {
  /** -1 = no age limit */
  maxAgeMs: string
  /** -1 = no byte cap */
  maxBytes: string
  /** 0 = no row cap */
  maxRows: string
  aggressive: boolean
}

export interface TopicPartition {
  partition: number
  low: string
  high: string
  messages: string
  bytes: string
}

export interface TopicDetail extends TopicSummary {
  bytes: string
  partitionDetails: TopicPartition[]
  config: EffectiveEntry[]
}

const retentionOf = (row: TopicRow): Retention => ({
  maxAgeMs: row.retentionMaxAgeSeconds === 0 ? '-1' : String(BigInt(row.retentionMaxAgeSeconds) * 1000n),
  maxBytes: row.maxTotalPayloadBytes === '0' ? '-1' : row.maxTotalPayloadBytes,
  maxRows: row.maxRowsPerTopic,
  aggressive: row.aggressiveRetention,
})

const sum = (values: string[]) => values.reduce((a, v) => a + BigInt(v), 0n).toString()

export async function topicSummaries(ctx: PgQueueContext): Promise<TopicSummary[]> {
  const [rows, marks] = await Promise.all([ctx.store.topics.listTopics(), ctx.store.partitionStats.allPartitionMarks()])
  const byTopic = new Map<string, typeof marks>()
  for (const m of marks) {
    const list = byTopic.get(m.topic)
    if (list) list.push(m)
    else byTopic.set(m.topic, [m])
  }
  return rows.map((row) => {
    const own = byTopic.get(row.name) ?? []
    return {
      name: row.name,
      partitions: row.partitionCount,
      messages: sum(own.map((m) => (BigInt(m.high) - BigInt(m.low)).toString())),
      high: sum(own.map((m) => m.high)),
      retention: retentionOf(row),
    }
  })
}

export async function topicDetail(ctx: PgQueueContext, name: string): Promise<TopicDetail> {
  const row = await requireTopic(ctx, name)
  const [marks, usage] = await Promise.all([partitionWatermarks(ctx, row), ctx.store.partitionStats.partitionUsage(row.id)])
  const used = new Map(usage.map((u) => [u.partition, u]))
  const partitionDetails = marks.map((m) => ({
    partition: m.partition,
    low: m.low,
    high: m.high,
    messages: used.get(m.partition)?.messages ?? '0',
    bytes: used.get(m.partition)?.bytes ?? '0',
  }))
  return {
    name: row.name,
    partitions: row.partitionCount,
    messages: sum(partitionDetails.map((p) => p.messages)),
    bytes: sum(partitionDetails.map((p) => p.bytes)),
    high: sum(partitionDetails.map((p) => p.high)),
    retention: retentionOf(row),
    partitionDetails,
    config: effectiveEntries(row, ctx.config.topicDefaults),
  }
}
