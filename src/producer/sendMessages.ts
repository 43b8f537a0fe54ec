import type { Message, PartitionerArgs, RecordMetadata } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import type { PayloadCompression } from '../config/types.js'
import type { Queryable } from '../db/database.js'
import { isLockNotAvailable } from '../db/pgErrors.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { encodeHeaders } from '../kafkajs/headers.js'
import type { NormalizedMessage } from '../kafkajs/messageValidation.js'
import { buildPartitionMetadata } from '../kafkajs/partitioners.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { enqueuePartition, FLAG_NULL_KEY, FLAG_NULL_VALUE, type ProducerSequence, type StoredMessage } from '../store/enqueue.js'
import { cleanupPolicy } from '../store/compaction.js'
import { enqueuePartitions } from '../store/enqueueMany.js'
import type { NewTopic, TopicRow } from '../store/topics.js'
import { PayloadEncoder } from '../codec/payloadCodec.js'
import { mapBounded } from './boundedParallel.js'

export type Partitioner = (args: PartitionerArgs) => number

export interface TopicBatch {
  topic: string
  /** as given by the caller (custom partitioners see these) */
  originals: Message[]
  messages: NormalizedMessage[]
}

export interface SendOptions {
  partitioner: Partitioner
  compression: PayloadCompression
  autoCreate?: (topic: string) => NewTopic
  /** the producer's metadataMaxAge: cached topic rows older than this are read again */
  metadataMaxAge: number
}

export interface PartitionBatch {
  topic: TopicRow
  partition: number
  rows: StoredMessage[]
  /** idempotent producers: the producer sequence of this batch, fixed before any retry */
  sequence?: ProducerSequence
}

/**
 * Resolves topics (creating them when allowed), picks each message's partition and encodes the rows. Done once
 * per send, outside the retry loop, so a retry writes exactly the same batches to the same partitions. Batches
 * are in (topic id, partition) order.
 */
export async function planSend(ctx: PgQueueContext, batches: TopicBatch[], opts: SendOptions): Promise<PartitionBatch[]> {
  const names = [...new Set(batches.map((b) => b.topic))]
  const lookup = async () => {
    const topics = await ctx.topics.get(ctx.db, names, opts.autoCreate, opts.metadataMaxAge)
    if (names.some((n) => !topics.has(n))) throw protocolError('UNKNOWN_TOPIC_OR_PARTITION')
    return topics
  }
  try {
    return groupByPartition(batches, await lookup(), opts)
  } catch (e) {
    if (!(e instanceof PartitionOutOfRange)) throw e
    // partitions may have been added elsewhere since the rows were cached: read them again before refusing
    ctx.topics.forget(names)
    return groupByPartition(batches, await lookup(), opts)
  }
}

/** A partition the (possibly cached) topic row does not have. */
class PartitionOutOfRange extends KafkaJSNonRetriableError {}

/**
 * Writes planned batches. A send to one partition is one autocommit statement; sends of this process to it that
 * arrive while a write to it is in flight are coalesced into the next statement (see PartitionWriter). A send to
 * several partitions is ONE statement for all of them (docs/decisions/write-011): it takes the partitions' locks in
 * (topic, partition) order and is atomic across them; when a wait while holding gives up (a cycle with DataHub's
 * enqueue_batch, which locks in message order) it wrote nothing, and the send goes partition by partition.
 * Idempotent batches carry their own producer sequence and go one statement per partition.
 */
export async function writePlan(ctx: PgQueueContext, plan: PartitionBatch[]): Promise<RecordMetadata[]> {
  if (plan.length === 0) return []
  await ctx.ensurePartitionsIfDue()
  if (plan.length > 1 && plan.every((g) => !g.sequence)) {
    try {
      return await writePartitions(ctx, plan)
    } catch (e) {
      // partition by partition, as Kafka writes them: each statement holds one lock and cannot be half of a cycle
      if (!isLockNotAvailable(e)) throw e
    }
  }
  // at most one write per pool connection in flight: the rest wait here, not in the pool's queue (its timeout)
  return mapBounded(plan, ctx.config.pool.max, (g) => (g.sequence ? writePartition(ctx, ctx.db.pool, g) : writerFor(ctx, g).write(g)))
}

/** Most rows and payload bytes one coalesced statement carries. */
const COALESCE_MAX_ROWS = 5000
const COALESCE_MAX_BYTES = 8 * 1024 * 1024

interface Waiting {
  batch: PartitionBatch
  bytes: number
  resolve: (m: RecordMetadata) => void
  reject: (e: unknown) => void
}

/**
 * Sends to one partition of one client. Their statements serialise on the partition's ledger row anyway (the
 * lock is held until COMMIT, which waits for the WAL flush), so while one is in flight the next ones queue here
 * and then go as ONE statement: N concurrent single-message sends cost one round trip and one WAL flush instead
 * of N of each, and nothing waits longer than it would have waited for the row lock. Each caller gets its own
 * offsets (the slice of the combined range); order is arrival order; a failed statement fails every send in it
 * and each caller's retry policy applies as before.
 */
class PartitionWriter {
  private busy = false
  private readonly waiting: Waiting[] = []

  constructor(private readonly ctx: PgQueueContext) {}

  write(batch: PartitionBatch): Promise<RecordMetadata> {
    return new Promise<RecordMetadata>((resolve, reject) => {
      let bytes = 0
      for (const r of batch.rows) bytes += r.payload.length
      this.waiting.push({ batch, bytes, resolve, reject })
      if (!this.busy) void this.drain()
    })
  }

  private async drain(): Promise<void> {
    this.busy = true
    while (this.waiting.length > 0) {
      const group = this.take()
      const first = group[0].batch
      const combined: PartitionBatch =
        group.length === 1 ? first : { topic: first.topic, partition: first.partition, rows: group.flatMap((w) => w.batch.rows) }
      try {
        const meta = await writePartition(this.ctx, this.ctx.db.pool, combined)
        let base = BigInt(meta.baseOffset ?? 0)
        for (const w of group) {
          w.resolve({ ...meta, baseOffset: base.toString() })
          base += BigInt(w.batch.rows.length)
        }
      } catch (e) {
        for (const w of group) w.reject(e)
      }
    }
    this.busy = false
  }

  private take(): Waiting[] {
    let rows = 0
    let bytes = 0
    let n = 0
    for (const w of this.waiting) {
      if (n > 0 && (rows + w.batch.rows.length > COALESCE_MAX_ROWS || bytes + w.bytes > COALESCE_MAX_BYTES)) break
      rows += w.batch.rows.length
      bytes += w.bytes
      n++
    }
    return this.waiting.splice(0, n)
  }
}

const writers = new WeakMap<PgQueueContext, Map<string, PartitionWriter>>()

function writerFor(ctx: PgQueueContext, g: PartitionBatch): PartitionWriter {
  let byPartition = writers.get(ctx)
  if (!byPartition) writers.set(ctx, (byPartition = new Map()))
  const key = `${g.topic.id}:${g.partition}`
  let writer = byPartition.get(key)
  if (!writer) byPartition.set(key, (writer = new PartitionWriter(ctx)))
  return writer
}

async function writePartition(ctx: PgQueueContext, q: Queryable, g: PartitionBatch): Promise<RecordMetadata> {
  const t = ctx.db.tables
  // a partition without a ledger row (made by DataHub's clients) is seeded inside this statement
  const result = await enqueuePartition(q, t, g.topic.id, g.partition, g.rows, g.sequence)
  return {
    topicName: g.topic.name,
    partition: g.partition,
    errorCode: 0,
    baseOffset: (BigInt(result.firstSeq) - 1n).toString(),
    logAppendTime: '-1',
    logStartOffset: (BigInt(result.lowSeq ?? result.firstSeq) - 1n).toString(),
  }
}

async function writePartitions(ctx: PgQueueContext, plan: PartitionBatch[]): Promise<RecordMetadata[]> {
  const result = await enqueuePartitions(
    ctx.db.pool,
    ctx.db.tables,
    plan.map((g) => ({ topicId: g.topic.id, partition: g.partition, messages: g.rows })),
  )
  return plan.map((g, i) => {
    const first = BigInt(result.firstSeqs[i])
    const low = result.lowSeqs[i]
    return {
      topicName: g.topic.name,
      partition: g.partition,
      errorCode: 0,
      baseOffset: (first - 1n).toString(),
      logAppendTime: '-1',
      logStartOffset: ((low === null ? first : BigInt(low)) - 1n).toString(),
    }
  })
}

function groupByPartition(batches: TopicBatch[], topics: Map<string, TopicRow>, opts: SendOptions): PartitionBatch[] {
  // per topic id, its partitions' batches: one map lookup per message, no key string built per message
  const byTopic = new Map<string, Map<number, PartitionBatch>>()
  const codec = new PayloadEncoder(opts.compression)
  for (const batch of batches) {
    const topic = topics.get(batch.topic)!
    const partitionMetadata = buildPartitionMetadata(topic.partitionCount)
    const compacted = cleanupPolicy(topic.config).compact
    let byPartition = byTopic.get(topic.id)
    if (!byPartition) byTopic.set(topic.id, (byPartition = new Map()))
    batch.messages.forEach((m, i) => {
      const partition = choosePartition(topic, m, batch.originals[i], partitionMetadata, opts.partitioner)
      // Kafka's LogValidator: the whole produce request fails, nothing of it is written
      if (compacted && m.key === null) {
        throw protocolError('INVALID_RECORD', `Compacted topic cannot accept message without key in topic partition ${topic.name}-${partition}.`)
      }
      let group = byPartition.get(partition)
      if (!group) byPartition.set(partition, (group = { topic, partition, rows: [] }))
      group.rows.push(toStoredMessage(m, codec))
    })
  }
  return [...byTopic.values()].flatMap((m) => [...m.values()]).sort(byTopicThenPartition)
}

/** Topic ids are decimal text without leading zeros: a shorter one is a smaller number. */
const byTopicThenPartition = (a: PartitionBatch, b: PartitionBatch): number =>
  a.topic.id.length - b.topic.id.length || (a.topic.id < b.topic.id ? -1 : a.topic.id > b.topic.id ? 1 : a.partition - b.partition)

function choosePartition(
  topic: TopicRow,
  m: NormalizedMessage,
  original: Message,
  partitionMetadata: PartitionerArgs['partitionMetadata'],
  partitioner: Partitioner,
): number {
  const message = original.key === undefined ? { ...original, key: null } : original
  const partition = m.partition ?? partitioner({ topic: topic.name, partitionMetadata, message })
  if (!Number.isInteger(partition) || partition < 0 || partition >= topic.partitionCount) {
    throw new PartitionOutOfRange(
      `Invalid partition ${partition} for topic "${topic.name}": it has ${topic.partitionCount} partitions (0..${topic.partitionCount - 1})`,
    )
  }
  return partition
}

function toStoredMessage(m: NormalizedMessage, codec: PayloadEncoder): StoredMessage {
  const { payload, code } = m.value ? codec.encode(m.value) : { payload: EMPTY, code: 0 }
  let flags = 0
  if (m.value === null) flags |= FLAG_NULL_VALUE
  if (m.key === null) flags |= FLAG_NULL_KEY
  // routing_key is text (no NUL, valid UTF-8): the exact key bytes go aside only when text cannot carry them.
  // Invalid UTF-8 decodes to U+FFFD, so only a key showing one needs the byte-exact comparison.
  const text = m.key ? m.key.toString('utf8') : ''
  const exact = !text.includes('\0') && (m.key === null || !text.includes('\uFFFD') || Buffer.from(text, 'utf8').equals(m.key))
  return {
    routingKey: exact ? text : text.replace(/\0/g, ''),
    messageKey: exact ? null : m.key,
    flags,
    priority: m.priority,
    payload,
    compression: code,
    headers: encodeHeaders(m.headers),
    timestamp: m.timestamp ?? null,
  }
}

const EMPTY = Buffer.alloc(0)
