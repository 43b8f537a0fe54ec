import kafkajs from '../kafkajs/upstream.js'
import type { GroupDescription } from 'kafkajs'
import type { GroupState } from '../store/members.js'
import type { PgQueueContext } from './context.js'

// Shared by consumer.describeGroup() and admin.describeGroups().

/** KafkaJS's GroupDescription of each group, in the order asked, from one read of the store (describeGroup's). */
export async function describeGroups(ctx: PgQueueContext, groupIds: string[]): Promise<GroupDescription[]> {
  return (await ctx.store.members.describeGroups(groupIds)).map(toDescription)
}

export async function describeGroup(ctx: PgQueueContext, groupId: string): Promise<GroupDescription> {
  return (await describeGroups(ctx, [groupId]))[0]!
}

/**
 * KafkaJS's GroupDescription from the members table and the group's current generation: each member's protocol
 * metadata and the assignment its leader wrote, as the KafkaJS AssignerProtocol bytes Kafka would return.
 */
function toDescription({ groupId, members, generation }: GroupState): GroupDescription {
  if (members.length === 0) {
    return { groupId, members: [], protocol: '', protocolType: 'consumer', state: 'Empty', errorCode: 0 } as GroupDescription
  }
  const protocol = generation?.protocol ?? ''
  const stable = members.every((m) => generation?.assignment[m.memberId] !== undefined)
  const empty = kafkajs.AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: {}, userData: Buffer.alloc(0) })
  return {
    groupId,
    protocol,
    protocolType: 'consumer',
    state: stable ? 'Stable' : 'PreparingRebalance',
    errorCode: 0,
    members: members.map((m) => {
      const offered = m.protocols.find((p) => p.name === protocol) ?? m.protocols[0]
      const assigned = generation?.assignment[m.memberId]
      return {
        memberId: m.memberId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: offered
          ? Buffer.from(offered.metadata, 'base64')
          : kafkajs.AssignerProtocol.MemberMetadata.encode({ version: 0, topics: m.topics, userData: Buffer.alloc(0) }),
        memberAssignment: assigned ? Buffer.from(assigned, 'base64') : empty,
      }
    }),
  } as GroupDescription
}
