// deleteTopicRecords: Kafka's DeleteRecords on message rows. Errors take the shapes KafkaJS gives them.
import type { Logger, SeekEntry } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { KafkaJSBrokerNotFound, KafkaJSDeleteTopicRecordsError, KafkaJSNonRetriableError, type KafkaJSError } from '../kafkajs/errors.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { type RecordsCutoff } from '../store/messages.js'
import { fail } from './errors.js'
import { partitionWatermarks, requireTopic } from './lookup.js'

type PartitionError = { partition: number; offset: string; error: KafkaJSError }

const BrokerNotFound = KafkaJSBrokerNotFound as unknown as new (message: string, meta: { retriable: boolean }) => KafkaJSError
const NonRetriableWithCause = KafkaJSNonRetriableError as unknown as new (e: Error, meta: { cause: Error }) => KafkaJSError

const isLong = (v: unknown) => (typeof v === 'string' || typeof v === 'number') && /^-?\d+$/.test(String(v).trim())

/**
 * Removes every message with an offset below the given one ('-1' = everything up to the high watermark). Offsets
 * keep counting afterwards: the low watermark moves up, the next message gets the next offset. An offset below the
 * low watermark deletes nothing (KafkaJS logs a warning); past the high watermark it is OFFSET_OUT_OF_RANGE.
 */
export async function deleteTopicRecords(ctx: PgQueueContext, logger: Logger, req: { topic: string; partitions: SeekEntry[] }): Promise<void> {
  const { topic, partitions } = req ?? ({} as typeof req)
  if (!topic || typeof topic !== 'string') fail(`Invalid topic "${topic}"`)
  if (!partitions || partitions.length === 0) fail('Invalid partitions')
  for (const { offset } of partitions) if (!isLong(offset)) fail(`Invalid offset, expected a long received ${offset}`)

  const row = await requireTopic(ctx, topic)
  const marks = new Map((await partitionWatermarks(ctx, row)).map((m) => [m.partition, m]))

  // KafkaJS finds no leader for a partition the topic does not have and fails before sending anything
  const leaderless: PartitionError[] = partitions
    .filter((p) => !marks.has(Number(p.partition)))
    .map(({ partition, offset }) => ({
      partition,
      offset,
      error: new BrokerNotFound('Could not find the leader for the partition', { retriable: false }),
    }))
  if (leaderless.length > 0) throw new KafkaJSDeleteTopicRecordsError({ topic, partitions: leaderless })

  const cutoffs: RecordsCutoff[] = []
  const outOfRange: PartitionError[] = []
  for (const { partition, offset } of partitions) {
    const { low, high } = marks.get(Number(partition))!
    const value = BigInt(offset)
    if (value !== -1n && value < BigInt(low)) {
      logger.warn('The requested offset is before the earliest offset maintained on the partition - no records will be deleted from this partition', {
        topic,
        partition,
        offset,
      })
    }
    if (value < -1n || value > BigInt(high)) outOfRange.push({ partition, offset, error: protocolError('OFFSET_OUT_OF_RANGE') })
    else cutoffs.push({ partition: Number(partition), offset: value.toString() })
  }
  const deleted = await ctx.store.messages.deleteRecordsBefore(row.id, cutoffs)
  logger.debug('Deleted records', { topic, partitions: deleted })
  if (outOfRange.length > 0) {
    // KafkaJS's retrier wraps the non-retriable DeleteRecords error: callers get it as `cause`
    const cause = new KafkaJSDeleteTopicRecordsError({ topic, partitions: outOfRange })
    throw new NonRetriableWithCause(cause, { cause })
  }
}
