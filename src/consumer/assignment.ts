/** A live group member and the topics it subscribes to. */
export interface GroupMemberView {
  memberId: string
  topics: readonly string[]
}

/** topic → partitions, the shape of KafkaJS's GROUP_JOIN `memberAssignment`. */
export type MemberAssignment = Record<string, number[]>

/**
 * Round-robin assignment, as KafkaJS's default assigner balances: topics and members in sorted order, each
 * partition to the next member that subscribes to its topic. Every member computes the same result from the
 * same live set, so no coordinator is needed; partition leases keep it safe while views briefly differ.
 */
export function assignPartitions(members: readonly GroupMemberView[], partitionCounts: ReadonlyMap<string, number>): Map<string, MemberAssignment> {
  const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0))
  const result = new Map<string, MemberAssignment>(sorted.map((m) => [m.memberId, {}]))
  let cursor = 0
  for (const topic of [...partitionCounts.keys()].sort()) {
    const candidates = sorted.filter((m) => m.topics.includes(topic))
    if (candidates.length === 0) continue
    const count = partitionCounts.get(topic)!
    for (let partition = 0; partition < count; partition++) {
      const owner = candidates[cursor++ % candidates.length]
      ;(result.get(owner.memberId)![topic] ??= []).push(partition)
    }
  }
  return result
}
