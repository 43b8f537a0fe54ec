// Consumer lag and DataHub's offset reset. Lag is measured against the sequence ledger's high watermark
// (next_seq - 1), not MAX(seq) of stored rows as DataHub does: retention may empty a partition without the log end
// moving back, so an empty partition is neither "lagging" nor falsely STUCK_AHEAD, and can be reset.
import type { PgQueueContext } from '../client/context.js'
import { storeFor } from '../store/handle.js'
import type { OffsetCell } from '../store/lag.js'
import { rolledBack } from '../store/transactions.js'
import { OpsError, badRequest } from './errors.js'

export const STUCK_AHEAD = 'STUCK_AHEAD'

export interface PartitionLag {
  partition: number
  /** committed offset (next to read) */
  offset: string
  /** high watermark (log-end offset) */
  high: string
  lag: string
  /** how far the committed offset is past the log end; > 0 means STUCK_AHEAD */
  aheadBy: string
  metadata?: typeof STUCK_AHEAD
  /** null while the offset is a consumer's starting position rather than a commit */
  committedAt: number | null
}

export interface TopicLag {
  topic: string
  /** sum of the partitions' lag; STUCK_AHEAD partitions count 0 here and in `stuckAhead` instead */
  totalLag: string
  maxLag: string
  partitionCount: number
  stuckAhead: number
  /** only with `detailed` */
  partitions?: PartitionLag[]
}

export interface GroupLag {
  group: string
  topics: TopicLag[]
}

export interface LagQuery {
  group?: string
  topic?: string
  detailed?: boolean
}

/** lag = max(0, high - offset), aheadBy = max(0, offset - high), as DataHub computes them per partition. */
export function partitionLag(cell: Pick<OffsetCell, 'partition' | 'offset' | 'high' | 'committedAt'>): PartitionLag {
  const offset = BigInt(cell.offset)
  const high = BigInt(cell.high)
  const lag = high > offset ? high - offset : 0n
  const aheadBy = offset > high ? offset - high : 0n
  const entry: PartitionLag = {
    partition: cell.partition,
    offset: cell.offset,
    high: cell.high,
    lag: lag.toString(),
    aheadBy: aheadBy.toString(),
    committedAt: cell.committedAt,
  }
  if (aheadBy > 0n) entry.metadata = STUCK_AHEAD
  return entry
}

/** Groups cells (ordered by group, topic, partition) into per-group, per-topic aggregates. */
export function aggregateLag(cells: OffsetCell[], detailed: boolean): GroupLag[] {
  const groups: GroupLag[] = []
  let group: GroupLag | undefined
  let topic: (TopicLag & { all: PartitionLag[] }) | undefined
  const finish = () => {
    if (!topic) return
    const { all, ...rest } = topic
    group!.topics.push(detailed ? { ...rest, partitions: all } : rest)
    topic = undefined
  }
  for (const cell of cells) {
    if (group?.group !== cell.group) {
      finish()
      groups.push((group = { group: cell.group, topics: [] }))
    }
    if (topic?.topic !== cell.topic) {
      finish()
      topic = { topic: cell.topic, totalLag: '0', maxLag: '0', partitionCount: 0, stuckAhead: 0, all: [] }
    }
    const p = partitionLag(cell)
    topic.all.push(p)
    topic.partitionCount++
    if (p.metadata) topic.stuckAhead++
    topic.totalLag = (BigInt(topic.totalLag) + BigInt(p.lag)).toString()
    if (BigInt(p.lag) > BigInt(topic.maxLag)) topic.maxLag = p.lag
  }
  finish()
  return groups
}

async function requireTopicName(ctx: PgQueueContext, topic: string | undefined): Promise<void> {
  if (topic === undefined) return
  if (typeof topic !== 'string' || topic === '') badRequest('topic must be a non-empty string')
  if ((await ctx.store.topics.findTopics([topic])).length === 0) throw new OpsError(404, `Unknown topic "${topic}"`)
}

/** Topics made by DataHub's own clients may lack ledger rows; seed them so every partition has a high watermark. */
async function seedMissingLedgers(ctx: PgQueueContext): Promise<void> {
  for (const id of await ctx.store.lag.topicsMissingLedger()) await ctx.store.topics.seedLedger(id)
}

/** Lag of every committed (group, topic, partition), aggregated per topic; 404 for an unknown topic. */
export async function consumerLag(ctx: PgQueueContext, query: LagQuery = {}): Promise<GroupLag[]> {
  await requireTopicName(ctx, query.topic)
  await seedMissingLedgers(ctx)
  const cells = await ctx.store.lag.offsetCells({ group: query.group || null, topic: query.topic ?? null })
  return aggregateLag(cells, query.detailed ?? false)
}

export interface ResetRequest {
  group?: string
  topic?: string
  partition?: number
  /** default true: only cells whose offset is past the high watermark */
  onlyStuckAhead?: boolean
  /** compute exactly what would be reset (the statement runs and is rolled back), change nothing */
  dryRun?: boolean
}

export interface OffsetReset {
  group: string
  topic: string
  partition: number
  previousOffset: string | null
  newOffset: string
  high: string
}

export interface ResetResult {
  partitionsUpdated: number
  resets: OffsetReset[]
}

/**
 * DataHub's `POST /consumer/offsets/reset`: sets matching offsets to the high watermark (epoch 0). With a group and a
 * topic and onlyStuckAhead=false, partitions the group never committed are written too. Members already holding a
 * partition keep their in-memory position until they next take it (restart or rebalance); they never commit below
 * the reset because nothing past it reaches them.
 */
export async function resetOffsets(ctx: PgQueueContext, req: ResetRequest = {}): Promise<ResetResult> {
  const { group, topic, partition } = req
  const onlyStuckAhead = req.onlyStuckAhead ?? true
  if (group !== undefined && (typeof group !== 'string' || group === '')) badRequest('group must be a non-empty string')
  if (typeof onlyStuckAhead !== 'boolean') badRequest('onlyStuckAhead must be a boolean')
  if (partition !== undefined) {
    if (!Number.isInteger(partition) || partition < 0) badRequest('partition must be an integer >= 0')
    if (topic === undefined) badRequest('partition needs a topic')
  }
  await requireTopicName(ctx, topic)
  await seedMissingLedgers(ctx)
  const filter = {
    group: group ?? null,
    topic: topic ?? null,
    partition: partition ?? null,
    onlyStuckAhead,
    fillMissing: group !== undefined && topic !== undefined && !onlyStuckAhead,
  }
  const cells = req.dryRun
    ? await rolledBack(ctx.db, (client) => storeFor(ctx.db, client).lag.resetOffsetsToHigh(filter))
    : await ctx.store.lag.resetOffsetsToHigh(filter)
  const resets = cells.map((c) => ({ ...c, high: c.newOffset }))
  const log = ctx.logger.namespace('Operations')
  if (!req.dryRun) for (const r of resets) log.warn('Consumer offset reset to the high watermark', { ...r })
  return { partitionsUpdated: resets.length, resets }
}
