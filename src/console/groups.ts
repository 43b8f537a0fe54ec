// Consumer groups for the console: the list (state, members, lag per group) and one group's page (members with
// their last heartbeat and assignment, the generation, per-partition committed offset, lag and STUCK_AHEAD).
import type { Admin } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import kafkajs from '../kafkajs/upstream.js'
import { consumerLag, type TopicLag } from '../ops/lag.js'

export interface GroupSummary {
  group: string
  state: string
  members: number
  totalLag: string
  stuckAhead: number
  topics: string[]
}

export interface GroupMemberView {
  memberId: string
  clientId: string
  clientHost: string
  lastHeartbeatMs: number
  joinedAtMs: number
  /** topic -> partitions, from the leader's assignment for the current generation */
  assignment: Record<string, number[]>
}

export interface GroupDetail {
  group: string
  state: string
  protocol: string
  generation: number | null
  leaderId: string | null
  members: GroupMemberView[]
  lag: TopicLag[]
}

const { MemberAssignment } = kafkajs.AssignerProtocol

export async function groupSummaries(ctx: PgQueueContext, admin: Admin): Promise<GroupSummary[]> {
  const { groups } = await admin.listGroups()
  const ids = groups.map((g) => g.groupId).sort()
  const [described, lag] = await Promise.all([admin.describeGroups(ids), consumerLag(ctx)])
  const lagOf = new Map(lag.map((g) => [g.group, g.topics]))
  return described.groups.map((d) => {
    const topics = lagOf.get(d.groupId) ?? []
    return {
      group: d.groupId,
      state: d.state,
      members: d.members.length,
      totalLag: topics.reduce((a, t) => a + BigInt(t.totalLag), 0n).toString(),
      stuckAhead: topics.reduce((a, t) => a + t.stuckAhead, 0),
      topics: topics.map((t) => t.topic),
    }
  })
}

export async function groupDetail(ctx: PgQueueContext, admin: Admin, group: string): Promise<GroupDetail> {
  const [{ groups }, members, generation, lag] = await Promise.all([
    admin.describeGroups([group]),
    ctx.store.members.liveMembers(group),
    ctx.store.groupGeneration.readGeneration(group),
    consumerLag(ctx, { group, detailed: true }),
  ])
  const described = groups[0]!
  const assigned = new Map(described.members.map((m) => [m.memberId, m.memberAssignment]))
  return {
    group,
    state: described.state,
    protocol: described.protocol,
    generation: generation ? Number(generation.generation) : null,
    leaderId: generation?.leaderId ?? null,
    members: members.map((m) => ({
      memberId: m.memberId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      lastHeartbeatMs: Number(m.heartbeatAtMs),
      joinedAtMs: Number(m.joinedAtMs),
      assignment: decodeAssignment(assigned.get(m.memberId)),
    })),
    lag: lag[0]?.topics ?? [],
  }
}

function decodeAssignment(bytes: Buffer | undefined): Record<string, number[]> {
  if (!bytes || bytes.length === 0) return {}
  return MemberAssignment.decode(bytes)?.assignment ?? {}
}
