import kafkajs from '../kafkajs/upstream.js'
import type { Assigner, Cluster, Logger, PartitionAssigner, PartitionMetadata } from 'kafkajs'
import { buildPartitionMetadata } from '../kafkajs/partitioners.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { assignPartitions, type MemberAssignment } from './assignment.js'

const { MemberAssignment: AssignmentCodec, MemberMetadata } = kafkajs.AssignerProtocol

/** An assigner a member offers, as the group leader sees it. */
export interface OfferedProtocol {
  name: string
  /** the bytes of assigner.protocol({ topics }).metadata */
  metadata: Buffer
}

export interface GroupMemberOffer {
  memberId: string
  topics: readonly string[]
  protocols: readonly OfferedProtocol[]
}

/**
 * The `cluster` an assigner gets: what KafkaJS's own assigners and frameworks' ones (NestJS's reply-partition
 * assigner) call on KafkaJS's Cluster, answered from the topics table (one node, id 0, leads every partition).
 */
export function assignerCluster(partitionCounts: () => ReadonlyMap<string, number>): Cluster {
  const findTopicPartitionMetadata = (topic: string): PartitionMetadata[] => buildPartitionMetadata(partitionCounts().get(topic) ?? 0)
  return {
    findTopicPartitionMetadata,
    // the leader reads the partition counts from the topics table right before it assigns
    refreshMetadata: async () => undefined,
    refreshMetadataIfNecessary: async () => undefined,
    isConnected: () => true,
    getNodeIds: () => [0],
  } as unknown as Cluster
}

/**
 * The default assigner: KafkaJS's round robin (members by id, partitions in turn, name 'RoundRobinAssigner'), except
 * that a partition goes only to members subscribed to its topic. With the same subscription everywhere that is
 * KafkaJS's result; with different ones KafkaJS's can hand a topic to a member that drops it, leaving partitions
 * unowned (issue #13 item 5), which this never does.
 */
export const subscriptionRoundRobin: PartitionAssigner = ({ cluster }) => ({
  name: 'RoundRobinAssigner',
  version: 0,
  async assign({ members, topics }) {
    const views = members.map((m) => ({ memberId: m.memberId, topics: MemberMetadata.decode(m.memberMetadata)?.topics ?? [] }))
    const counts = new Map(topics.map((topic) => [topic, cluster.findTopicPartitionMetadata(topic).length]))
    const assignment = assignPartitions(views, counts)
    return members.map((m) => ({
      memberId: m.memberId,
      memberAssignment: AssignmentCodec.encode({ version: 0, assignment: assignment.get(m.memberId) ?? {}, userData: Buffer.alloc(0) }),
    }))
  },
  protocol({ topics }) {
    return { name: this.name, metadata: MemberMetadata.encode({ version: this.version, topics, userData: Buffer.alloc(0) }) }
  },
})

export function createAssigners(
  factories: readonly PartitionAssigner[] | undefined,
  config: { cluster: Cluster; groupId: string; logger: Logger },
): Assigner[] {
  const list = factories && factories.length > 0 ? factories : [subscriptionRoundRobin]
  return list.map((factory) => factory(config))
}

/** The protocol the group uses: the leader's first assigner that every member offers (null: there is none). */
export function chooseProtocol(leaderProtocols: readonly string[], members: readonly GroupMemberOffer[]): string | null {
  return leaderProtocols.find((name) => members.every((m) => m.protocols.some((p) => p.name === name))) ?? null
}

/**
 * The leader's part of a rebalance, as KafkaJS's leader does it: the chosen assigner's assign() over the members
 * (with their protocol metadata) and the union of their subscriptions. Returns each member's MemberAssignment
 * bytes; a member the assigner left out gets an empty assignment.
 */
export async function runAssigner(assigner: Assigner, members: readonly GroupMemberOffer[]): Promise<Map<string, Buffer>> {
  const topics = [...new Set(members.flatMap((m) => m.topics))].sort()
  const result = await assigner.assign({
    members: members.map((m) => ({ memberId: m.memberId, memberMetadata: m.protocols.find((p) => p.name === assigner.name)!.metadata })),
    topics,
  })
  if (!Array.isArray(result)) throw new KafkaJSNonRetriableError(`Partition assigner "${assigner.name}" returned no assignment list`)
  const out = new Map<string, Buffer>(
    members.map((m) => [m.memberId, AssignmentCodec.encode({ version: 0, assignment: {}, userData: Buffer.alloc(0) })]),
  )
  for (const entry of result) if (out.has(entry.memberId)) out.set(entry.memberId, Buffer.from(entry.memberAssignment))
  return out
}

/** A member's side: its MemberAssignment, with topics it does not subscribe to dropped (KafkaJS does the same). */
export function decodeAssignment(
  bytes: Buffer,
  subscribed: ReadonlySet<string>,
): { assignment: MemberAssignment; assignedTopics: string[]; unsubscribed: string[]; userData: Buffer | null } {
  const decoded = AssignmentCodec.decode(bytes)
  const assignment: MemberAssignment = {}
  const unsubscribed: string[] = []
  const entries = Object.entries(decoded?.assignment ?? {})
  for (const [topic, partitions] of entries) {
    if (subscribed.has(topic)) assignment[topic] = [...partitions].sort((a, b) => a - b)
    else unsubscribed.push(topic)
  }
  // every topic the leader assigned, in the assignment's order (KafkaJS's RECEIVED_UNSUBSCRIBED_TOPICS names them so)
  return { assignment, assignedTopics: entries.map(([topic]) => topic), unsubscribed, userData: decoded?.userData ?? null }
}
