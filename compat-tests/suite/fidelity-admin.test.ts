import kafkajs from 'kafkajs'
import type { Admin } from 'kafkajs'
import { describe, expect } from 'vitest'
import { Collector, contract, messages, uniqueName, waitFor, type Scope } from '../harness.js'

const { KafkaJSNonRetriableError } = kafkajs

/** An admin that was never connected: KafkaJS connects its cluster on demand for these calls. */
async function unconnectedAdmin(t: Scope): Promise<Admin> {
  const admin = (await t.kafka()).admin()
  t.track(admin)
  return admin
}

/** A topic with `n` messages in partition 0, made with the scope's own (connected) clients. */
async function topicWith(t: Scope, n: number, partitions = 1): Promise<string> {
  const topic = await t.topic(partitions)
  if (n > 0) await (await t.producer()).send({ topic, messages: messages(n).map((m) => ({ ...m, partition: 0 })) })
  return topic
}

async function committed(admin: Admin, groupId: string, topic: string, resolveOffsets = false) {
  const [entry] = await admin.fetchOffsets({ groupId, topics: [topic], resolveOffsets })
  return entry!.partitions.map(({ partition, offset }) => ({ partition, offset }))
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: Error) => e,
  )
}

// Each test has its own topic and group, and on Kafka most of them wait for KafkaJS's own setOffsets/resetOffsets
// consumer (a group join and a fetch of up to 5 s each): run side by side, the file takes its slowest test's time
// instead of the sum (two minutes on Kafka).
describe.concurrent('admin without connect()', () => {
  contract("describeConfigs names a fresh topic's cleanup.policy and the compaction defaults; alterConfigs makes it compact", async (t) => {
    const topic = await t.topic(1)
    const admin = await t.admin()
    const { ConfigResourceTypes } = kafkajs
    const describe = async (configNames: string[]) => {
      const res = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames }] })
      return Object.fromEntries(res.resources[0]!.configEntries.map((e) => [e.configName, [e.configValue, e.isDefault]]))
    }
    expect(await describe(['cleanup.policy'])).toEqual({ 'cleanup.policy': ['delete', true] })
    expect(await describe(['delete.retention.ms', 'min.cleanable.dirty.ratio', 'min.compaction.lag.ms'])).toEqual({
      'delete.retention.ms': ['86400000', true],
      'min.cleanable.dirty.ratio': ['0.5', true],
      'min.compaction.lag.ms': ['0', true],
    })
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
    })
    // Kafka applies a topic's new config through its metadata log: describeConfigs may answer with the old value for
    // a moment (fresh-clone run, 4 Dec)
    await waitFor(async () => (await describe(['cleanup.policy']))['cleanup.policy']?.[0] === 'compact', { message: 'cleanup.policy compact' })
    expect(await describe(['cleanup.policy'])).toEqual({ 'cleanup.policy': ['compact', false] })
  })

  contract(
    "createPartitions: an unknown topic and an assignment naming a broker that does not exist are refused with Kafka's messages",
    async (t) => {
      const topic = await t.topic(1)
      const admin = await t.admin()
      await expect(admin.createPartitions({ topicPartitions: [{ topic: `${topic}x`, count: 3 }] })).rejects.toHaveProperty(
        'message',
        'This server does not host this topic-partition',
      )
      await expect(admin.createPartitions({ topicPartitions: [{ topic, count: 3, assignments: [[10], [10]] }] })).rejects.toHaveProperty(
        'message',
        'Replica assignment is invalid',
      )
      const meta = await admin.fetchTopicMetadata({ topics: [topic] })
      expect(meta.topics[0]!.partitions).toHaveLength(1)
    },
  )

  contract('listTopics works without connect()', async (t) => {
    const topic = await t.topic(1)
    const admin = await unconnectedAdmin(t)
    expect(await admin.listTopics()).toContain(topic)
  })

  contract('createTopics works without connect()', async (t) => {
    const admin = await unconnectedAdmin(t)
    const topic = uniqueName('noconnect')
    // no waitForLeaders: on a loaded broker KafkaJS's leader wait can meet UNKNOWN_TOPIC_OR_PARTITION for the new
    // topic and throw (fresh-clone run 2 of 4 Dec); the test waits for the listing itself
    expect(await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: false })).toBe(true)
    await waitFor(async () => (await (await t.admin()).listTopics()).includes(topic), { message: 'topic listed' })
  })

  contract('fetchTopicMetadata works without connect()', async (t) => {
    const topic = await t.topic(3)
    const admin = await unconnectedAdmin(t)
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    expect(topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2])
  })

  contract('fetchTopicOffsets works without connect()', async (t) => {
    const topic = await topicWith(t, 2)
    const admin = await unconnectedAdmin(t)
    expect(await admin.fetchTopicOffsets(topic)).toEqual([{ partition: 0, offset: '2', high: '2', low: '0' }])
  })

  contract('fetchTopicOffsetsByTimestamp works without connect()', async (t) => {
    const topic = await topicWith(t, 2)
    const admin = await unconnectedAdmin(t)
    expect(await admin.fetchTopicOffsetsByTimestamp(topic, Date.now() + 60_000)).toEqual([{ partition: 0, offset: '2' }])
  })

  contract('fetchOffsets works without connect()', async (t) => {
    const topic = await t.topic(1)
    const admin = await unconnectedAdmin(t)
    expect(await committed(admin, uniqueName('group'), topic)).toEqual([{ partition: 0, offset: '-1' }])
  })

  contract('deleteTopics works without connect()', async (t) => {
    const topic = await t.topic(1)
    const admin = await unconnectedAdmin(t)
    await admin.deleteTopics({ topics: [topic] })
    await waitFor(async () => !(await (await t.admin()).listTopics()).includes(topic), { message: 'topic gone' })
  })

  contract('createPartitions works without connect()', async (t) => {
    const topic = await t.topic(1)
    const admin = await unconnectedAdmin(t)
    await admin.createPartitions({ topicPartitions: [{ topic, count: 2 }] })
    await waitFor(async () => (await (await t.admin()).fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions.length === 2, {
      message: '2 partitions',
    })
  })

  contract('setOffsets and resetOffsets work without connect()', async (t) => {
    const topic = await topicWith(t, 3)
    const groupId = uniqueName('group')
    const admin = await unconnectedAdmin(t)
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '2' }] })
    expect(await committed(await t.admin(), groupId, topic)).toEqual([{ partition: 0, offset: '2' }])
    await admin.resetOffsets({ groupId, topic, earliest: true })
    expect(await committed(await t.admin(), groupId, topic, true)).toEqual([{ partition: 0, offset: '0' }])
  })

  contract('disconnect() of an admin that never connected resolves', async (t) => {
    const admin = (await t.kafka()).admin()
    await expect(admin.disconnect()).resolves.toBeUndefined()
  })
})

describe.concurrent('admin offsets as Kafka stores them', () => {
  contract('resetOffsets({ earliest: true }) then fetchOffsets({ resolveOffsets: true }) returns the low watermark', async (t) => {
    const topic = await topicWith(t, 3)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '3' }] })
    await admin.resetOffsets({ groupId, topic, earliest: true })
    expect(await committed(admin, groupId, topic, true)).toEqual([{ partition: 0, offset: '0' }])
    // resolving writes the offsets back: a plain fetch now shows them too
    expect(await committed(admin, groupId, topic)).toEqual([{ partition: 0, offset: '0' }])
  })

  contract('resetOffsets() (latest) then fetchOffsets({ resolveOffsets: true }) returns the high watermark', async (t) => {
    const topic = await topicWith(t, 3)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '1' }] })
    await admin.resetOffsets({ groupId, topic, earliest: false })
    expect(await committed(admin, groupId, topic, true)).toEqual([{ partition: 0, offset: '3' }])
    expect(await committed(admin, groupId, topic)).toEqual([{ partition: 0, offset: '3' }])
  })

  contract('resetOffsets({ earliest: true }) then a plain fetchOffsets returns "-2"', async (t) => {
    const topic = await topicWith(t, 3)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.resetOffsets({ groupId, topic, earliest: true })
    expect(await committed(admin, groupId, topic)).toEqual([{ partition: 0, offset: '-2' }])
  })

  contract('resetOffsets() (latest) then a plain fetchOffsets returns "-1"', async (t) => {
    const topic = await topicWith(t, 3)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '2' }] })
    await admin.resetOffsets({ groupId, topic, earliest: false })
    expect(await committed(admin, groupId, topic)).toEqual([{ partition: 0, offset: '-1' }])
  })

  contract('setOffsets with "-2" and "-1" is stored as the marker and resolved on request', async (t) => {
    const topic = await topicWith(t, 4, 2)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.setOffsets({
      groupId,
      topic,
      partitions: [
        { partition: 0, offset: '-2' },
        { partition: 1, offset: '-1' },
      ],
    })
    expect(await committed(admin, groupId, topic)).toEqual([
      { partition: 0, offset: '-2' },
      { partition: 1, offset: '-1' },
    ])
    expect(await committed(admin, groupId, topic, true)).toEqual([
      { partition: 0, offset: '0' },
      { partition: 1, offset: '0' },
    ])
  })

  contract('setOffsets moves a committed offset back and forth exactly', async (t) => {
    const topic = await topicWith(t, 5)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '4' }] })
    expect(await committed(admin, groupId, topic)).toEqual([{ partition: 0, offset: '4' }])
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '1' }] })
    expect(await committed(admin, groupId, topic)).toEqual([{ partition: 0, offset: '1' }])
  })

  contract('setOffsets on one partition leaves the others at "-1"', async (t) => {
    const topic = await topicWith(t, 2, 3)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 1, offset: '0' }] })
    expect(await committed(admin, groupId, topic)).toEqual([
      { partition: 0, offset: '-1' },
      { partition: 1, offset: '0' },
      { partition: 2, offset: '-1' },
    ])
  })

  contract('a group reset to earliest is read from the start by a fromBeginning consumer', async (t) => {
    const topic = await topicWith(t, 3)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '3' }] })
    await admin.resetOffsets({ groupId, topic, earliest: true })
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(3)
    expect(seen.messages.map((m) => m.offset)).toEqual(['0', '1', '2'])
  })

  contract("a reset marker is resolved with the consumer's own fromBeginning (false: the log end)", async (t) => {
    const topic = await topicWith(t, 3)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '1' }] })
    await admin.resetOffsets({ groupId, topic, earliest: true })
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: false })
    const seen = new Collector()
    await t.runAndJoin(consumer, { eachMessage: seen.eachMessage })
    await (await t.producer()).send({ topic, messages: [{ value: 'new', partition: 0 }] })
    await seen.waitForCount(1)
    expect(seen.messages.map((m) => [m.offset, m.value])).toEqual([['3', 'new']])
  })

  contract('after the consumer commits, fetchOffsets reports the committed offset instead of the marker', async (t) => {
    const topic = await topicWith(t, 2)
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.resetOffsets({ groupId, topic, earliest: true })
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(2)
    await consumer.disconnect()
    expect(await committed(admin, groupId, topic)).toEqual([{ partition: 0, offset: '2' }])
  })

  contract('setOffsets is refused while the group has running members', async (t) => {
    const topic = await topicWith(t, 1)
    const groupId = uniqueName('group')
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    await t.runAndJoin(consumer, { eachMessage: async () => {} })
    const err = await rejection((await t.admin()).setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '0' }] }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('The consumer group must have no running instances, current state: Stable')
  })

  contract('fetchOffsets without topics lists only the topics the group committed to', async (t) => {
    const [a, b] = [await topicWith(t, 2), await topicWith(t, 2)]
    const groupId = uniqueName('group')
    const admin = await t.admin()
    await admin.setOffsets({ groupId, topic: a, partitions: [{ partition: 0, offset: '1' }] })
    const all = await admin.fetchOffsets({ groupId })
    expect(all.map((x) => x.topic)).toEqual([a])
    expect(all[0]!.partitions).toEqual([{ partition: 0, offset: '1', metadata: null }])
    expect(all.some((x) => x.topic === b)).toBe(false)
  })

  contract('admin offset calls validate their arguments with KafkaJS messages', async (t) => {
    const admin = await t.admin()
    const cases: Array<[Promise<unknown>, string]> = [
      [admin.fetchOffsets({ groupId: '' } as never), 'Invalid groupId '],
      [admin.fetchOffsets({ groupId: 'g', topics: 'x' } as never), 'Expected topics array to be set'],
      [admin.resetOffsets({ groupId: 'g' } as never), 'Invalid topic undefined'],
      [admin.setOffsets({ groupId: 'g', topic: 't', partitions: [] }), 'Invalid partitions'],
      [admin.fetchTopicOffsets('' as never), 'Invalid topic '],
    ]
    for (const [call, message] of cases) {
      const err = await rejection(call)
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect(err.message).toBe(message)
    }
  })
})
