import type { PgQueueContext } from '../client/context.js'
import { againIfTopicDeleted } from '../db/pgErrors.js'
import type { NetworkInstrumentation } from '../kafkajs/networkEvents.js'
import type { FetchSource } from './fetchManager.js'
import type { OffsetWriter } from './offsetManager.js'

/** Who this member is in its group right now (read at each call: the generation moves). */
export interface MemberFence {
  readonly lockOwner: string
  readonly generation: number
}

/** The fetch manager's rows, from the store, fenced by this member's leases in the current generation. */
export function storeFetchSource(ctx: PgQueueContext, groupId: string, member: MemberFence, network: NetworkInstrumentation): FetchSource {
  return {
    fetch: (partitions, limit, bulk, bounds) =>
      network.as('Fetch', () =>
        ctx.store.fetch.fetchPartitions(
          { group: groupId, lockOwner: member.lockOwner, generation: member.generation },
          partitions,
          limit,
          bulk,
          bounds,
        ),
      ),
    watermarks: async (topicId, partition) => {
      const all = await network.as('ListOffsets', () => ctx.store.topics.topicWatermarks(topicId))
      const marks = all.find((w) => w.partition === partition)
      return { low: BigInt(marks?.low ?? '0'), high: BigInt(marks?.high ?? '0') }
    },
  }
}

/** The offset manager's writes, to the store, fenced by this member's live partition leases of its generation. */
export function storeOffsetWriter(ctx: PgQueueContext, groupId: string, member: MemberFence, network: NetworkInstrumentation): OffsetWriter {
  return {
    // a deleted topic's partitions come back refused, so the member lets them go
    write: (commits, { exact, durable, range }) =>
      againIfTopicDeleted(() =>
        network.as('OffsetCommit', () =>
          ctx.store.offsets.commitOffsets(groupId, commits, { lockOwner: member.lockOwner, generation: member.generation, exact, durable, range }),
        ),
      ),
    topicIds: async (topics) => new Map([...(await ctx.topics.get(ctx.db, topics))].map(([name, row]) => [name, row.id])),
  }
}
