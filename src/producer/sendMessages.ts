import type { Message, PartitionerArgs, RecordMetadata } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import type { PayloadCompression } from '../config/types.js'
import type { Queryable } from '../db/database.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { encodeHeaders } from '../kafkajs/headers.js'
import type { NormalizedMessage } from '../kafkajs/messageValidation.js'
import { buildPartitionMetadata } from '../kafkajs/partitioners.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { enqueuePartition, FLAG_NULL_KEY, FLAG_NULL_VALUE, type ProducerSequence, type StoredMessage } from '../store/enqueue.js'
import type { NewTopic, TopicRow } from '../store/topics.js'
import { encodePayload } from './payloadCodec.js'

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
 * are in (topic id, partition) order so two concurrent multi-partition sends cannot deadlock.
 */
export async function planSend(ctx: PgQueueContext, batches: TopicBatch[], opts: SendOptions): Promise<PartitionBatch[]> {
  const names = [...new Set(batches.map((b) => b.topic))]
  const topics = await ctx.topics.get(ctx.db, names, opts.autoCreate)
  if (names.some((n) => !topics.has(n))) throw protocolError('UNKNOWN_TOPIC_OR_PARTITION')
  return groupByPartition(batches, topics, opts)
}

/**
 * Writes planned batches, one statement per (topic, partition). With `client` the statements join the caller's
 * transaction; otherwise a single partition is one autocommit statement and several share one transaction.
 */
export async function writePlan(ctx: PgQueueContext, plan: PartitionBatch[], client?: Queryable): Promise<RecordMetadata[]> {
  if (plan.length === 0) return []
  await ctx.ensurePartitionsIfDue()
  const write = async (q: Queryable) => {
    const out: RecordMetadata[] = []
    for (const g of plan) out.push(await writePartition(ctx, q, g))
    return out
  }
  if (client) return write(client)
  if (plan.length === 1) return write(ctx.db.pool)
  return ctx.db.transaction(write)
}

async function writePartition(ctx: PgQueueContext, q: Queryable, g: PartitionBatch): Promise<RecordMetadata> {
  const t = ctx.db.tables
  let result = await enqueuePartition(q, t, g.topic.id, g.partition, g.rows, g.sequence)
  if (result.firstSeq === null) {
    // no ledger row: the topic was created by a client that does not keep one
    await ctx.topics.repair(ctx.db, g.topic)
    result = await enqueuePartition(q, t, g.topic.id, g.partition, g.rows, g.sequence)
    if (result.firstSeq === null) throw protocolError('UNKNOWN_TOPIC_OR_PARTITION')
  }
  return {
    topicName: g.topic.name,
    partition: g.partition,
    errorCode: 0,
    baseOffset: (BigInt(result.firstSeq) - 1n).toString(),
    logAppendTime: '-1',
    logStartOffset: '-1',
  }
}

function groupByPartition(batches: TopicBatch[], topics: Map<string, TopicRow>, opts: SendOptions): PartitionBatch[] {
  const byKey = new Map<string, PartitionBatch>()
  for (const batch of batches) {
    const topic = topics.get(batch.topic)!
    const partitionMetadata = buildPartitionMetadata(topic.partitionCount)
    batch.messages.forEach((m, i) => {
      const partition = choosePartition(topic, m, batch.originals[i], partitionMetadata, opts.partitioner)
      const key = `${topic.id.padStart(20, '0')}:${String(partition).padStart(5, '0')}`
      let group = byKey.get(key)
      if (!group) byKey.set(key, (group = { topic, partition, rows: [] }))
      group.rows.push(toStoredMessage(m, opts.compression))
    })
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g)
}

function choosePartition(
  topic: TopicRow,
  m: NormalizedMessage,
  original: Message,
  partitionMetadata: PartitionerArgs['partitionMetadata'],
  partitioner: Partitioner,
): number {
  const partition =
    m.partition ?? partitioner({ topic: topic.name, partitionMetadata, message: { ...original, key: original.key ?? null } })
  if (!Number.isInteger(partition) || partition < 0 || partition >= topic.partitionCount) {
    throw new KafkaJSNonRetriableError(
      `Invalid partition ${partition} for topic "${topic.name}": it has ${topic.partitionCount} partitions (0..${topic.partitionCount - 1})`,
    )
  }
  return partition
}

function toStoredMessage(m: NormalizedMessage, compression: PayloadCompression): StoredMessage {
  const { payload, code } = m.value ? encodePayload(m.value, compression) : { payload: EMPTY, code: 0 }
  let flags = 0
  if (m.value === null) flags |= FLAG_NULL_VALUE
  if (m.key === null) flags |= FLAG_NULL_KEY
  // routing_key is text (no NUL, valid UTF-8): the exact key bytes go aside only when text cannot carry them
  const text = m.key ? m.key.toString('utf8') : ''
  const exact = !text.includes('\0') && (m.key === null || Buffer.from(text, 'utf8').equals(m.key))
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
