// listTopics, fetchTopicMetadata and describeCluster: the database is the one "broker" (node 0), leader and only
// replica of every partition.
import type { ITopicMetadata } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { buildPartitionMetadata } from '../kafkajs/partitioners.js'
import { fail } from './errors.js'
import { requireTopics } from './lookup.js'

export const NODE_ID = 0

export async function listTopics(ctx: PgQueueContext): Promise<string[]> {
  return (await ctx.store.topics.listTopics()).map((t) => t.name)
}

/** No topics (or an empty list) = every topic, by name; otherwise in the order asked, unknown names rejecting. */
export async function fetchTopicMetadata(ctx: PgQueueContext, options?: { topics?: string[] }): Promise<{ topics: ITopicMetadata[] }> {
  const topics = options?.topics
  if (topics) {
    if (!Array.isArray(topics)) fail(`Invalid topics array ${topics}`)
    for (const topic of topics) if (!topic || typeof topic !== 'string') fail(`Invalid topic ${topic}`)
  }
  const rows = topics && topics.length > 0 ? await requireTopics(ctx, topics) : await ctx.store.topics.listTopics()
  return { topics: rows.map((r) => ({ name: r.name, partitions: buildPartitionMetadata(r.partitionCount) })) }
}

export interface ClusterDescription {
  brokers: Array<{ nodeId: number; host: string; port: number }>
  controller: number | null
  clusterId: string
}

/** The PostgreSQL server as the one broker: host and port as the pool resolved them (never credentials). */
export async function describeCluster(ctx: PgQueueContext): Promise<ClusterDescription> {
  const client = await ctx.db.pool.connect()
  const { host, port } = client
  client.release()
  return {
    brokers: [{ nodeId: NODE_ID, host, port }],
    controller: NODE_ID,
    clusterId: `pgqueue:${ctx.tables.schema}.${ctx.tables.prefix}`,
  }
}
