import type { RecordMetadata } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import type { Queryable } from '../db/database.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { enqueueDeferred } from '../store/enqueueDeferred.js'
import type { PartitionBatch } from './sendMessages.js'

/**
 * Writes planned batches inside the caller's transaction with their offsets assigned at COMMIT (V008), so a long
 * transaction does not hold the partitions' sequence rows. The offsets are not known before the commit, so
 * RecordMetadata carries baseOffset '-1' (documented in docs/compatibility.md).
 */
export async function writeDeferred(ctx: PgQueueContext, plan: PartitionBatch[], client: Queryable): Promise<RecordMetadata[]> {
  await ctx.ensurePartitionsIfDue()
  const out: RecordMetadata[] = []
  for (const g of plan) {
    if (!(await enqueueDeferred(client, ctx.db.tables, g.topic.id, g.partition, g.rows))) {
      // no ledger row: the topic was created by a client that does not keep one
      await ctx.topics.repair(ctx.db, g.topic)
      if (!(await enqueueDeferred(client, ctx.db.tables, g.topic.id, g.partition, g.rows))) throw protocolError('UNKNOWN_TOPIC_OR_PARTITION')
    }
    out.push({ topicName: g.topic.name, partition: g.partition, errorCode: 0, baseOffset: '-1', logAppendTime: '-1', logStartOffset: '-1' })
  }
  return out
}
