import type { PgQueueContext } from '../client/context.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import type { TopicRow, Watermarks } from '../store/topics.js'

/**
 * Topic rows for admin calls, always read fresh (the shared cache may lag other processes). Any unknown name is
 * Kafka's UNKNOWN_TOPIC_OR_PARTITION. Rows come back in the order asked.
 */
export async function requireTopics(ctx: PgQueueContext, names: string[]): Promise<TopicRow[]> {
  const rows = new Map((await ctx.store.topics.findTopics(names)).map((r) => [r.name, r]))
  return names.map((n) => rows.get(n) ?? missingTopic())
}

export async function requireTopic(ctx: PgQueueContext, name: string): Promise<TopicRow> {
  return (await requireTopics(ctx, [name]))[0]!
}

function missingTopic(): never {
  throw protocolError('UNKNOWN_TOPIC_OR_PARTITION')
}

/**
 * Watermarks of every partition. A topic created by DataHub's own clients may lack sequence-ledger rows; they are
 * seeded first so every partition is reported (and can be committed to).
 */
export async function partitionWatermarks(ctx: PgQueueContext, row: TopicRow): Promise<Watermarks[]> {
  let marks = await ctx.store.topics.topicWatermarks(row.id)
  if (marks.length < row.partitionCount) {
    await ctx.store.topics.seedLedger(row.id)
    marks = await ctx.store.topics.topicWatermarks(row.id)
  }
  return marks
}
