// Topic watermarks and consumer-group offsets. Kafka offsets map onto the ledger as DESIGN.md's Offsets section
// says: committed offset = offset_value, high = next_seq - 1, low = first stored seq - 1.
import type { FetchOffsetsPartition, Logger, SeekEntry } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { describeGroup } from '../client/groupDescription.js'
import { validateGroupId } from '../kafkajs/messageValidation.js'
import { validateOffsetEntry } from '../kafkajs/offsetValidation.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { markOffsets, type MarkedOffset } from '../store/offsetResets.js'
import { commitOffsets, type OffsetCommit } from '../store/offsets.js'
import { type TopicRow } from '../store/topics.js'
import { transaction } from '../store/transactions.js'
import { fail } from './errors.js'
import { partitionWatermarks, requireTopic, requireTopics } from './lookup.js'

const LATEST = '-1'
const EARLIEST = '-2'

function checkTopic(topic: unknown): asserts topic is string {
  if (!topic || typeof topic !== 'string') fail(`Invalid topic ${topic}`)
}

export async function fetchTopicOffsets(ctx: PgQueueContext, topic: string): Promise<Array<SeekEntry & { high: string; low: string }>> {
  checkTopic(topic)
  const marks = await partitionWatermarks(ctx, await requireTopic(ctx, topic))
  return marks.map(({ partition, high, low }) => ({ partition, offset: high, high, low }))
}

/**
 * First offset whose timestamp is at or after `timestamp`; the high watermark when none is, or with no timestamp.
 * As in Kafka's ListOffsets, -1 means the latest offset (high watermark) and -2 the earliest (low watermark).
 */
export async function fetchTopicOffsetsByTimestamp(ctx: PgQueueContext, topic: string, timestamp?: number): Promise<SeekEntry[]> {
  checkTopic(topic)
  const row = await requireTopic(ctx, topic)
  const marks = await partitionWatermarks(ctx, row)
  if (timestamp === undefined || timestamp === null || Number(timestamp) === Number(LATEST)) {
    return marks.map(({ partition, high }) => ({ partition, offset: high }))
  }
  if (Number(timestamp) === Number(EARLIEST)) return marks.map(({ partition, low }) => ({ partition, offset: low }))
  if (!Number.isFinite(Number(timestamp))) fail(`Invalid timestamp ${timestamp}`)
  return ctx.store.topics.offsetsByTimestamp(row.id, Math.trunc(Number(timestamp)))
}

type TopicOffsets = { topic: string; partitions: FetchOffsetsPartition[] }

export interface FetchOffsetsRequest {
  groupId: string
  topics?: string[]
  resolveOffsets?: boolean
}

/**
 * A group's committed offsets. Named topics list every partition ('-1' where nothing is committed); without topics,
 * every topic the group has offsets for, committed partitions only (what Kafka's OffsetFetch returns). With
 * resolveOffsets, '-1' / '-2' become the high / low watermark and are written back through setOffsets, exactly as
 * KafkaJS does (so it too refuses while the group has running members).
 */
export async function fetchOffsets(ctx: PgQueueContext, logger: Logger, req: FetchOffsetsRequest): Promise<TopicOffsets[]> {
  const { groupId, resolveOffsets = false } = req ?? ({} as FetchOffsetsRequest)
  if (!groupId) fail(`Invalid groupId ${groupId}`)
  validateGroupId(groupId)
  const topics = req.topics ?? []
  if (!Array.isArray(topics)) fail('Expected topics array to be set')
  topics.forEach(checkTopic)

  const named = topics.length > 0
  const rows = named ? await requireTopics(ctx, topics) : await ctx.store.topics.listTopics()
  const committed = await ctx.store.offsets.readOffsets(
    groupId,
    rows.map((r) => r.id),
  )
  const byPartition = new Map(committed.map((c) => [`${c.topicId}:${c.partition}`, c]))
  let result: TopicOffsets[] = rows.map((row) => {
    const partitions: FetchOffsetsPartition[] = []
    for (let partition = 0; partition < row.partitionCount; partition++) {
      const c = byPartition.get(`${row.id}:${partition}`)
      if (c) partitions.push({ partition, offset: c.offset, metadata: c.metadata || null })
      else if (named) partitions.push({ partition, offset: LATEST, metadata: null })
    }
    return { topic: row.name, partitions }
  })
  if (!named) result = result.filter((t) => t.partitions.length > 0)
  if (!resolveOffsets) return result

  const resolved: TopicOffsets[] = []
  for (const { topic, partitions } of result) {
    const marks = new Map((await fetchTopicOffsets(ctx, topic)).map((m) => [m.partition, m]))
    const recalculated = partitions.map((p) => {
      const m = marks.get(p.partition)
      const offset = p.offset === EARLIEST ? m?.low : p.offset === LATEST ? m?.high : p.offset
      return { ...p, offset: offset ?? p.offset }
    })
    await setOffsets(ctx, logger, { groupId, topic, partitions: recalculated })
    resolved.push({ topic, partitions: recalculated })
  }
  return resolved
}

/**
 * KafkaJS's rule (it calls Empty and Dead groups "not running"). DataHub's consumers of the group on this topic count
 * as running too: their next commit would rebuild the old offset from their __acked__ markers.
 */
async function assertNoRunningInstances(ctx: PgQueueContext, groupId: string, topicId: string): Promise<void> {
  const { state } = await describeGroup(ctx, groupId)
  if (state !== 'Empty' && state !== 'Dead') {
    throw new KafkaJSNonRetriableError(`The consumer group must have no running instances, current state: ${state}`)
  }
  const [dataHub] = await ctx.store.dataHubMembers.findDataHubPresence(groupId, [topicId])
  if (dataHub) {
    throw new KafkaJSNonRetriableError(
      `The consumer group must have no running instances: DataHub's own consumers use it (${dataHub.kind} ${dataHub.detail} at ${dataHub.at})`,
    )
  }
}

export interface SetOffsetsRequest {
  groupId: string
  topic: string
  partitions: Array<SeekEntry & { metadata?: string | null }>
}

/**
 * Writes the group's offsets exactly (they may move back). '-1' / '-2' are stored as the marker, as KafkaJS commits
 * it: fetchOffsets reports it until the group commits, and the next consumer resolves it with its own fromBeginning.
 * Partitions the topic does not have are skipped, as KafkaJS's seek skips partitions outside the assignment.
 */
export async function setOffsets(ctx: PgQueueContext, logger: Logger, req: SetOffsetsRequest): Promise<void> {
  const { groupId, topic, partitions } = req ?? ({} as SetOffsetsRequest)
  if (!groupId) fail(`Invalid groupId ${groupId}`)
  validateGroupId(groupId)
  if (!topic) fail(`Invalid topic ${topic}`)
  if (!partitions || partitions.length === 0) fail('Invalid partitions')
  const row = await requireTopic(ctx, topic)
  await assertNoRunningInstances(ctx, groupId, row.id)
  for (const p of partitions) validateOffsetEntry({ topic, partition: p.partition, offset: p.offset }, { allowSpecial: true, checkMetadata: false })
  await writeOffsets(ctx, logger, groupId, row, partitions)
}

async function writeOffsets(ctx: PgQueueContext, logger: Logger, groupId: string, row: TopicRow, partitions: SetOffsetsRequest['partitions']) {
  const commits: OffsetCommit[] = []
  const marks: MarkedOffset[] = []
  for (const p of partitions) {
    const partition = Number(p.partition)
    if (!(partition >= 0 && partition < row.partitionCount)) {
      logger.warn('Skipping offset for a partition the topic does not have', { groupId, topic: row.name, partition })
      continue
    }
    const value = BigInt(p.offset)
    const metadata = p.metadata ?? null
    if (value === -1n || value === -2n) marks.push({ topicId: row.id, partition, marker: Number(value) as -1 | -2, metadata })
    else commits.push({ topicId: row.id, partition, offset: value.toString(), metadata })
  }
  if (commits.length === 0 && marks.length === 0) return
  // DataHub-made topics may lack ledger rows, which both writes join on
  await partitionWatermarks(ctx, row)
  await transaction(ctx.db, async (q) => {
    await markOffsets(q, ctx.tables, groupId, marks)
    if (commits.length > 0) await commitOffsets(q, ctx.tables, groupId, commits, { lockOwner: null, exact: true })
  })
}

/** Every partition to the low (earliest) or high watermark. */
export async function resetOffsets(ctx: PgQueueContext, logger: Logger, req: { groupId: string; topic: string; earliest?: boolean }): Promise<void> {
  const { groupId, topic, earliest = false } = req ?? ({} as typeof req)
  if (!groupId) fail(`Invalid groupId ${groupId}`)
  validateGroupId(groupId)
  if (!topic) fail(`Invalid topic ${topic}`)
  const row = await requireTopic(ctx, topic)
  const offset = earliest ? EARLIEST : LATEST
  const partitions = Array.from({ length: row.partitionCount }, (_, partition) => ({ partition, offset }))
  await assertNoRunningInstances(ctx, groupId, row.id)
  await writeOffsets(ctx, logger, groupId, row, partitions)
}
