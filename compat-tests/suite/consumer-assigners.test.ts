// Group-wide assignment by the group leader with the configured partition assigners (issue #13 items 5 and 7), on
// both backends: KafkaJS's assigner contract ({ cluster, groupId, logger } => { name, version, protocol, assign }),
// member metadata and userData in both directions, and a refused member whose assigners nobody else offers.
import { AssignerProtocol, type Consumer, type ConsumerGroupJoinEvent, type PartitionAssigner } from 'kafkajs'
import { describe, expect } from 'vitest'
import { contract, messages, uniqueName, waitFor, type Scope } from '../harness.js'

const { MemberMetadata, MemberAssignment } = AssignerProtocol

/**
 * Gives each partition, in turn, to a member subscribed to its topic; topics are the union of the members'
 * subscriptions (read from their metadata), partitions from cluster.findTopicPartitionMetadata.
 */
const subscriptionAware: PartitionAssigner = ({ cluster }) => ({
  name: 'SubscriptionAware',
  version: 0,
  async assign({ members }) {
    const subs = members
      .map((m) => ({ id: m.memberId, topics: MemberMetadata.decode(m.memberMetadata)!.topics }))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
    const out = new Map<string, Record<string, number[]>>(subs.map((s) => [s.id, {}]))
    let turn = 0
    for (const topic of [...new Set(subs.flatMap((s) => s.topics))].sort()) {
      const takers = subs.filter((s) => s.topics.includes(topic))
      for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
        const taker = takers[turn++ % takers.length]!
        ;(out.get(taker.id)![topic] ??= []).push(partitionId)
      }
    }
    return [...out].map(([memberId, assignment]) => ({
      memberId,
      memberAssignment: MemberAssignment.encode({ version: 0, assignment, userData: Buffer.alloc(0) }),
    }))
  },
  protocol({ topics }) {
    return { name: this.name, metadata: MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) }
  },
})

/** Everything to the member whose metadata userData says "take-all"; assignment userData names the taker. */
const takeAllByUserData =
  (wants: boolean): PartitionAssigner =>
  ({ cluster }) => ({
    name: 'TakeAll',
    version: 1,
    async assign({ members, topics }) {
      const taker = members.find((m) => MemberMetadata.decode(m.memberMetadata)!.userData.toString() === 'take-all') ?? members[0]!
      const all = Object.fromEntries(topics.map((topic) => [topic, cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId)]))
      return members.map((m) => ({
        memberId: m.memberId,
        memberAssignment: MemberAssignment.encode({
          version: 1,
          assignment: m.memberId === taker.memberId ? all : {},
          userData: Buffer.from(`taker=${taker.memberId}`),
        }),
      }))
    },
    protocol({ topics }) {
      return { name: this.name, metadata: MemberMetadata.encode({ version: 1, topics, userData: Buffer.from(wants ? 'take-all' : 'none') }) }
    },
  })

/** A consumer that records its latest GROUP_JOIN; started and joined before the next one starts, so it leads. */
async function joined(t: Scope, groupId: string, topics: string[], partitionAssigners: PartitionAssigner[], got: string[]) {
  const consumer = await t.consumer({ groupId, partitionAssigners })
  const joins: ConsumerGroupJoinEvent[] = []
  consumer.on(consumer.events.GROUP_JOIN, (e) => void joins.push(e))
  await consumer.subscribe({ topics, fromBeginning: true })
  await consumer.run({ eachMessage: async ({ topic, partition, message }) => void got.push(`${topic}/${partition}/${message.value}`) })
  await waitFor(() => joins.length > 0, { message: 'GROUP_JOIN', timeout: 40_000 })
  return { consumer, joins }
}

const last = (joins: ConsumerGroupJoinEvent[]) => joins.at(-1)!.payload

describe('consumer groups: partition assigners', () => {
  contract(
    'different subscriptions: an assigner over the union gives every partition to a subscribed member',
    async (t) => {
      const t1 = await t.topic(1, 't1')
      const t2 = await t.topic(2, 't2')
      const groupId = uniqueName('group')
      const gotA: string[] = []
      const gotB: string[] = []
      const a = await joined(t, groupId, [t1, t2], [subscriptionAware], gotA)
      const b = await joined(t, groupId, [t2], [subscriptionAware], gotB)
      await waitFor(
        () => {
          const assigned = [last(a.joins).memberAssignment, last(b.joins).memberAssignment]
          return assigned.flatMap((x) => [...(x[t1] ?? []).map((p) => `${t1}/${p}`), ...(x[t2] ?? []).map((p) => `${t2}/${p}`)]).length === 3
        },
        { message: 'three partitions assigned', timeout: 40_000 },
      )
      expect(last(b.joins).memberAssignment[t1]).toBeUndefined()
      expect(last(a.joins).groupProtocol).toBe('SubscriptionAware')
      const producer = await t.producer()
      await producer.send({ topic: t1, messages: messages(3, 'x') })
      await producer.send({ topic: t2, messages: [0, 1].flatMap((partition) => messages(3, `p${partition}`).map((m) => ({ ...m, partition }))) })
      await waitFor(() => gotA.length + gotB.length >= 9, { message: '9 messages', timeout: 40_000 })
      const partitionsSeen = new Set([...gotA, ...gotB].map((g) => g.split('/').slice(0, 2).join('/')))
      expect(partitionsSeen).toEqual(new Set([`${t1}/0`, `${t2}/0`, `${t2}/1`]))
    },
    { timeout: 120_000 },
  )

  contract(
    'an assigner that puts every partition on one member, chosen by member userData; assignment userData reaches describeGroup',
    async (t) => {
      const topic = await t.topic(3)
      const groupId = uniqueName('group')
      const gotA: string[] = []
      const gotB: string[] = []
      const a = await joined(t, groupId, [topic], [takeAllByUserData(false)], gotA)
      const b = await joined(t, groupId, [topic], [takeAllByUserData(true)], gotB)
      await waitFor(() => (last(b.joins).memberAssignment[topic] ?? []).length === 3 && !last(a.joins).memberAssignment[topic]?.length, {
        message: 'member B holds all three partitions',
        timeout: 40_000,
      })
      expect(last(b.joins).groupProtocol).toBe('TakeAll')
      expect(last(a.joins).isLeader || last(b.joins).isLeader).toBe(true)
      expect(last(a.joins).leaderId).toBe(last(b.joins).leaderId)
      const producer = await t.producer()
      await producer.send({ topic, messages: [0, 1, 2].map((partition) => ({ value: `v${partition}`, partition })) })
      await waitFor(() => gotB.length >= 3, { message: 'B gets all three', timeout: 40_000 })
      expect(gotA).toEqual([])
      const description = await b.consumer.describeGroup()
      expect(description.protocol).toBe('TakeAll')
      const takerId = last(b.joins).memberId
      for (const m of description.members) {
        expect(MemberAssignment.decode(m.memberAssignment)!.userData.toString()).toBe(`taker=${takerId}`)
      }
      const metadata = description.members.map((m) => MemberMetadata.decode(m.memberMetadata)!.userData.toString()).sort()
      expect(metadata).toEqual(['none', 'take-all'])
    },
    { timeout: 120_000 },
  )

  contract(
    'the reply-partition pattern: each instance learns its own partition from assign() over cluster metadata',
    async (t) => {
      const replies = await t.topic(2, 'replies')
      const groupId = uniqueName('group')
      // as NestJS's ClientKafka reply-partition assigner: partitions from cluster.findTopicPartitionMetadata, dealt out
      const replyAssigner: PartitionAssigner = ({ cluster }) => ({
        name: 'ReplyPartitionAssigner',
        version: 1,
        async assign({ members, topics }) {
          const ids = members.map((m) => m.memberId).sort()
          const out = new Map<string, Record<string, number[]>>(ids.map((id) => [id, {}]))
          for (const topic of topics) {
            cluster
              .findTopicPartitionMetadata(topic)
              .forEach(({ partitionId }, i) => (out.get(ids[i % ids.length]!)![topic] ??= []).push(partitionId))
          }
          return [...out].map(([memberId, assignment]) => ({
            memberId,
            memberAssignment: MemberAssignment.encode({ version: 1, assignment, userData: Buffer.alloc(0) }),
          }))
        },
        protocol({ topics }) {
          return { name: this.name, metadata: MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }) }
        },
      })
      const got: string[][] = [[], []]
      const instances: Array<{ consumer: Consumer; joins: ConsumerGroupJoinEvent[] }> = []
      for (const i of [0, 1]) instances.push(await joined(t, groupId, [replies], [replyAssigner], got[i]!))
      await waitFor(() => instances.every((x) => (last(x.joins).memberAssignment[replies] ?? []).length === 1), {
        message: 'one reply partition per instance',
        timeout: 40_000,
      })
      const own = instances.map((x) => last(x.joins).memberAssignment[replies]![0]!)
      expect(new Set(own).size).toBe(2)
      // each instance sends its request with its own reply partition; the reply lands there and only there
      const producer = await t.producer()
      await producer.send({ topic: replies, messages: own.map((partition, i) => ({ value: `reply-to-${i}`, partition })) })
      await waitFor(() => got.every((g) => g.length >= 1), { message: 'each instance gets its reply', timeout: 40_000 })
      expect(got.map((g) => g.map((x) => x.split('/')[2]))).toEqual([['reply-to-0'], ['reply-to-1']])
    },
    { timeout: 120_000 },
  )

  contract(
    'a member whose assigners no other member offers is refused with INCONSISTENT_GROUP_PROTOCOL',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      await joined(t, groupId, [topic], [subscriptionAware], [])
      const odd = await t.consumer({ groupId, partitionAssigners: [takeAllByUserData(false)] })
      await odd.subscribe({ topic, fromBeginning: true })
      let failure: unknown
      odd.on(odd.events.CRASH, (e) => void (failure ??= e.payload.error))
      await odd.run({ eachMessage: async () => undefined }).catch((e: unknown) => void (failure ??= e))
      await waitFor(() => failure !== undefined, { message: 'a refusal', timeout: 40_000 })
      expect((failure as { type?: string }).type).toBe('INCONSISTENT_GROUP_PROTOCOL')
    },
    { timeout: 120_000 },
  )
})
