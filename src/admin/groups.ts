import kafkajs from 'kafkajs'
import type { GroupDescription } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { assignPartitions } from '../consumer/assignment.js'
import { liveMembers } from '../store/members.js'
import { listTopics } from '../store/topics.js'

const PROTOCOL = 'RoundRobinAssigner'

/**
 * KafkaJS's GroupDescription from the members table. Assignments are recomputed with the same function the
 * members use, and encoded with KafkaJS's AssignerProtocol so tools that decode them keep working.
 */
export async function describeGroup(ctx: PgQueueContext, groupId: string): Promise<GroupDescription> {
  const db = ctx.db
  const members = await liveMembers(db.pool, db.tables, groupId)
  if (members.length === 0) {
    return { groupId, members: [], protocol: '', protocolType: 'consumer', state: 'Empty', errorCode: 0 } as GroupDescription
  }
  const subscribed = new Set(members.flatMap((m) => m.topics))
  const counts = new Map((await listTopics(db.pool, db.tables)).filter((t) => subscribed.has(t.name)).map((t) => [t.name, t.partitionCount]))
  const assignment = assignPartitions(members, counts)
  return {
    groupId,
    protocol: PROTOCOL,
    protocolType: 'consumer',
    state: 'Stable',
    errorCode: 0,
    members: members.map((m) => ({
      memberId: m.memberId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      memberMetadata: kafkajs.AssignerProtocol.MemberMetadata.encode({ version: 0, topics: m.topics, userData: Buffer.alloc(0) }),
      memberAssignment: kafkajs.AssignerProtocol.MemberAssignment.encode({
        version: 0,
        assignment: assignment.get(m.memberId) ?? {},
        userData: Buffer.alloc(0),
      }),
    })),
  } as GroupDescription
}
