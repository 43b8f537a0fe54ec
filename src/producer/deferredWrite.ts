import type { RecordMetadata } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import type { Queryable } from '../db/database.js'
import { enqueueDeferred } from '../store/enqueueDeferred.js'
import { stageOutbox } from '../store/outboxStaging.js'
import type { PartitionBatch } from './sendMessages.js'

/**
 * Writes planned batches inside the caller's transaction with their offsets assigned at COMMIT (the deferred trigger
 * of R__sequence_functions.sql, which takes the partitions' locks in (topic, partition) order whatever the order of
 * the sends), so a long transaction holds no sequence lock. The offsets are not known before the commit, so
 * RecordMetadata carries baseOffset '-1' (documented in docs/compatibility.md); logStartOffset is known and given. A
 * REPEATABLE READ or SERIALIZABLE caller's messages are staged instead and numbered after its COMMIT
 * (docs/decisions/outbox-010-staged-numbering.md): `staged` is told, so the client listens for that COMMIT.
 */
export async function writeDeferred(ctx: PgQueueContext, plan: PartitionBatch[], client: Queryable, staged: () => void): Promise<RecordMetadata[]> {
  await ctx.ensurePartitionsIfDue()
  const out: RecordMetadata[] = []
  for (const g of plan) {
    const { written, lowSeq } = await enqueueDeferred(client, ctx.db.tables, g.topic.id, g.partition, g.rows)
    if (!written) {
      await stageOutbox(client, ctx.db.tables, g.topic.id, g.partition, g.rows)
      staged()
    }
    // the log start is known now (an empty partition's starts at 0, as Kafka's does)
    const logStartOffset = lowSeq === null ? '0' : (BigInt(lowSeq) - 1n).toString()
    out.push({ topicName: g.topic.name, partition: g.partition, errorCode: 0, baseOffset: '-1', logAppendTime: '-1', logStartOffset })
  }
  return out
}
