import kafkajs from 'kafkajs'
import { describe, expect } from 'vitest'
import { Collector, contract, messages, uniqueName, waitFor, type Scope } from '../harness.js'

const { KafkaJSDeleteGroupsError, KafkaJSError } = kafkajs

/** Consumes `n` messages with a group, then leaves it (so the group is empty, with commits). */
async function consumeAndLeave(t: Scope, topic: string, groupId: string, n: number) {
  const consumer = await t.consumer({ groupId })
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen = new Collector()
  await consumer.run({ eachMessage: seen.eachMessage })
  await seen.waitForCount(n)
  await consumer.disconnect()
  return seen
}

const byPartition = <T extends { partition: number }>(xs: T[]) => [...xs].sort((a, b) => a.partition - b.partition)

describe('admin', () => {
  contract('createTopics returns true and listTopics includes the topic', async (t) => {
    const topic = uniqueName('created')
    // t.createTopics returns admin.createTopics' result once the topic is served (Kafka propagates
    // new topics to its metadata cache asynchronously)
    expect(await t.createTopics([{ topic, numPartitions: 2 }])).toBe(true)
    expect(await (await t.admin()).listTopics()).toContain(topic)
  })

  contract('createTopics returns false when the topic already exists', async (t) => {
    const topic = await t.topic(1)
    const admin = await t.admin()
    expect(await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: false })).toBe(false)
  })

  contract('deleteTopics removes the topic from listTopics', async (t) => {
    const topic = await t.topic(1)
    const admin = await t.admin()
    await admin.deleteTopics({ topics: [topic] })
    await waitFor(async () => !(await admin.listTopics()).includes(topic), { message: 'topic gone from listTopics' })
  })

  contract('fetchTopicMetadata lists every partition of the topic', async (t) => {
    const topic = await t.topic(3)
    const admin = await t.admin()
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    expect(topics).toHaveLength(1)
    expect(topics[0]!.name).toBe(topic)
    expect(topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2])
    for (const p of topics[0]!.partitions) expect(p.partitionErrorCode).toBe(0)
  })

  contract('fetchTopicMetadata rejects an unknown topic', async (t) => {
    const admin = await t.admin()
    const err = await admin.fetchTopicMetadata({ topics: [uniqueName('missing')] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSError)
  })

  contract('fetchTopicOffsets: empty partitions are 0/0/0, then high follows the writes', async (t) => {
    const topic = await t.topic(2)
    const admin = await t.admin()
    expect(byPartition(await admin.fetchTopicOffsets(topic))).toEqual([
      { partition: 0, offset: '0', high: '0', low: '0' },
      { partition: 1, offset: '0', high: '0', low: '0' },
    ])
    const producer = await t.producer()
    const [meta] = await producer.send({ topic, messages: messages(3).map((m) => ({ ...m, partition: 1 })) })
    expect(meta!.baseOffset).toBe('0')
    expect(byPartition(await admin.fetchTopicOffsets(topic))).toEqual([
      { partition: 0, offset: '0', high: '0', low: '0' },
      { partition: 1, offset: '3', high: '3', low: '0' },
    ])
  })

  contract(
    'fetchTopicOffsetsByTimestamp finds the first offset at or after a time',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await t.producer()
      await producer.send({ topic, messages: [{ value: 'early' }] })
      const early = Number((await readOne(t, topic)).timestamp)
      await waitFor(() => Date.now() > early + 5, { message: 'the clock to move on' })
      const between = Date.now()
      await waitFor(() => Date.now() > between + 5, { message: 'the clock to move on' })
      await producer.send({ topic, messages: [{ value: 'late' }] })
      const admin = await t.admin()
      expect(await admin.fetchTopicOffsetsByTimestamp(topic, between)).toEqual([{ partition: 0, offset: '1' }])
      expect(await admin.fetchTopicOffsetsByTimestamp(topic, early - 60_000)).toEqual([{ partition: 0, offset: '0' }])
      expect(await admin.fetchTopicOffsetsByTimestamp(topic, Date.now() + 60_000)).toEqual([{ partition: 0, offset: '2' }])
    },
    { needs: ['offsetsByTimestamp'] },
  )

  contract('fetchOffsets returns -1 for a group that committed nothing', async (t) => {
    const topic = await t.topic(2)
    const admin = await t.admin()
    const result = await admin.fetchOffsets({ groupId: uniqueName('group'), topics: [topic] })
    expect(result).toHaveLength(1)
    expect(result[0]!.topic).toBe(topic)
    expect(byPartition(result[0]!.partitions).map((p) => [p.partition, p.offset])).toEqual([
      [0, '-1'],
      [1, '-1'],
    ])
  })

  contract('fetchOffsets returns what the group committed', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(4) })
    await consumeAndLeave(t, topic, groupId, 4)
    const [result] = await (await t.admin()).fetchOffsets({ groupId, topics: [topic] })
    expect(result!.partitions).toEqual([expect.objectContaining({ partition: 0, offset: '4' })])
  })

  contract(
    'setOffsets moves an idle group: fetchOffsets and the next consumer follow it',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const producer = await t.producer()
      await producer.send({ topic, messages: messages(5) })
      await consumeAndLeave(t, topic, groupId, 5)
      const admin = await t.admin()
      await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '2' }] })
      const [result] = await admin.fetchOffsets({ groupId, topics: [topic] })
      expect(result!.partitions[0]!.offset).toBe('2')
      const again = await consumeAndLeave(t, topic, groupId, 3)
      expect(again.values().slice(0, 3)).toEqual(['m-2', 'm-3', 'm-4'])
    },
    { needs: ['offsetAdmin'] },
  )

  contract(
    'resetOffsets(earliest) replays the topic; resetOffsets(latest) skips to the end',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const producer = await t.producer()
      await producer.send({ topic, messages: messages(3) })
      await consumeAndLeave(t, topic, groupId, 3)
      const admin = await t.admin()
      await admin.resetOffsets({ groupId, topic, earliest: true })
      const replay = await consumeAndLeave(t, topic, groupId, 3)
      expect(replay.values().slice(0, 3)).toEqual(['m-0', 'm-1', 'm-2'])

      await admin.resetOffsets({ groupId, topic, earliest: false })
      const [result] = await admin.fetchOffsets({ groupId, topics: [topic], resolveOffsets: true })
      expect(result!.partitions[0]!.offset).toBe('3')
    },
    { needs: ['offsetAdmin'] },
  )

  contract(
    'listGroups and describeGroups show a running group with its member',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const consumer = await t.consumer({ groupId })
      await consumer.subscribe({ topic })
      const join = await t.runAndJoin(consumer, { eachMessage: async () => {} })
      const admin = await t.admin()
      const { groups } = await admin.listGroups()
      expect(groups).toContainEqual(expect.objectContaining({ groupId, protocolType: 'consumer' }))
      const described = await admin.describeGroups([groupId])
      expect(described.groups).toHaveLength(1)
      const group = described.groups[0]!
      expect(group).toMatchObject({ groupId, state: 'Stable', protocolType: 'consumer' })
      expect(group.members.map((m) => m.memberId)).toEqual([join.payload.memberId])
      expect(group.members[0]!.clientId).toBe('compat')
    },
    { needs: ['groupAdmin'] },
  )

  contract(
    'a group whose members all left is Empty and can be deleted',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const producer = await t.producer()
      await producer.send({ topic, messages: messages(1) })
      await consumeAndLeave(t, topic, groupId, 1)
      const admin = await t.admin()
      const [before] = (await admin.describeGroups([groupId])).groups
      expect(before).toMatchObject({ groupId, state: 'Empty', members: [] })
      const deleted = await admin.deleteGroups([groupId])
      expect(deleted).toEqual([expect.objectContaining({ groupId })])
      expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain(groupId)
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] })
      expect(offsets!.partitions[0]!.offset).toBe('-1')
    },
    { needs: ['groupAdmin'] },
  )

  contract(
    'deleteGroups rejects a group that still has members',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const consumer = await t.consumer({ groupId })
      await consumer.subscribe({ topic })
      await t.runAndJoin(consumer, { eachMessage: async () => {} })
      const err = await (await t.admin()).deleteGroups([groupId]).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(KafkaJSDeleteGroupsError)
      expect((err as InstanceType<typeof KafkaJSDeleteGroupsError>).groups).toEqual([expect.objectContaining({ groupId })])
    },
    { needs: ['groupAdmin'] },
  )
})

async function readOne(t: Scope, topic: string) {
  const consumer = await t.consumer()
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen = new Collector()
  await consumer.run({ eachMessage: seen.eachMessage })
  const [first] = await seen.waitForCount(1)
  await consumer.disconnect()
  return first!
}
