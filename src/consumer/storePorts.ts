import type { PgQueueContext } from '../client/context.js'
import { fetchPartitions } from '../store/fetch.js'
import { commitOffsets } from '../store/offsets.js'
import { topicWatermarks } from '../store/topics.js'
import type { FetchSource } from './fetchManager.js'
import type { OffsetWriter } from './offsetManager.js'

/** The fetch manager's rows, from the store. */
export function storeFetchSource(ctx: PgQueueContext): FetchSource {
  return {
    fetch: (partitions, limit, bulk) => fetchPartitions(ctx.db.pool, ctx.tables, partitions, limit, bulk),
    watermarks: async (topicId, partition) => {
      const marks = (await topicWatermarks(ctx.db.pool, ctx.tables, topicId)).find((w) => w.partition === partition)
      return { low: BigInt(marks?.low ?? '0'), high: BigInt(marks?.high ?? '0') }
    },
  }
}

/** The offset manager's writes, to the store, fenced by this member's partition leases. */
export function storeOffsetWriter(ctx: PgQueueContext, groupId: string, lockOwner: string): OffsetWriter {
  return {
    write: (commits, { exact, durable }) => commitOffsets(ctx.db.pool, ctx.tables, groupId, commits, { lockOwner, exact, durable }),
    topicIds: async (topics) => new Map([...(await ctx.topics.get(ctx.db, topics))].map(([name, row]) => [name, row.id])),
  }
}
