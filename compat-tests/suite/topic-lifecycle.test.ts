// Issue #25 item 2: topics deleted, re-created and grown by ANOTHER client (its own Kafka instance, so its own
// metadata, as another process would have), seen by a running producer and consumer.
import type { ConsumerCrashEvent, Kafka } from 'kafkajs'
import { describe, expect } from 'vitest'
import { Collector, contract, makeKafka, uniqueName, waitFor, type Scope } from '../harness.js'

/** A second client on the same backend, closed with the test. */
async function otherProcess(t: Scope): Promise<Kafka> {
  const kafka = await makeKafka({ clientId: 'other' })
  const admin = kafka.admin()
  await admin.connect()
  t.track(admin)
  return kafka
}

async function otherAdmin(t: Scope) {
  const admin = (await otherProcess(t)).admin()
  await admin.connect()
  t.track(admin)
  return admin
}

async function recreate(admin: Awaited<ReturnType<typeof otherAdmin>>, topic: string, numPartitions: number) {
  await admin.deleteTopics({ topics: [topic] })
  await waitFor(async () => !(await admin.listTopics()).includes(topic), { message: `${topic} deleted` })
  await waitFor(
    async () => {
      try {
        // false: it exists again already (a running client may auto-create it, as Kafka allows by default)
        await admin.createTopics({ topics: [{ topic, numPartitions }] })
        return true
      } catch {
        return false // Kafka may still be deleting it
      }
    },
    { message: `${topic} re-created`, interval: 200 },
  )
  await waitFor(
    async () => {
      try {
        const meta = await admin.fetchTopicMetadata({ topics: [topic] })
        return meta.topics[0]!.partitions.every((p) => p.leader >= 0) && (await admin.fetchTopicOffsets(topic)).length > 0
      } catch {
        return false
      }
    },
    { message: `${topic} has leaders` },
  )
}

describe('topics deleted, re-created and grown elsewhere', () => {
  contract(
    'a producer keeps sending after another client deletes and re-creates its topic',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await t.producer()
      await producer.send({ topic, messages: [{ value: 'before' }] })
      await recreate(await otherAdmin(t), topic, 1)
      const [meta] = await producer.send({ topic, messages: [{ value: 'after' }] })
      expect(meta).toMatchObject({ topicName: topic, partition: 0, errorCode: 0, baseOffset: '0' })
    },
    { timeout: 90_000 },
  )

  contract(
    'a producer with a short metadataMaxAge sends to partitions another client added',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await t.producer({ metadataMaxAge: 100 })
      await producer.send({ topic, messages: [{ value: 'p0' }] })
      const admin = await otherAdmin(t)
      await admin.createPartitions({ topicPartitions: [{ topic, count: 4 }] })
      await waitFor(async () => (await admin.fetchTopicOffsets(topic).catch(() => [])).length === 4, { message: '4 partitions' })
      await waitFor(
        async () => {
          try {
            const [meta] = await producer.send({ topic, messages: [{ value: 'p3', partition: 3 }] })
            return meta!.partition === 3
          } catch {
            return false
          }
        },
        { message: 'a send to partition 3' },
      )
    },
    { timeout: 60_000 },
  )

  contract(
    'an explicit partition beyond the cached count is sent once the producer re-reads the topic',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await t.producer({ metadataMaxAge: 100 })
      await producer.send({ topic, messages: [{ value: 'warm' }] })
      const admin = await otherAdmin(t)
      await admin.createPartitions({ topicPartitions: [{ topic, count: 2 }] })
      await waitFor(async () => (await admin.fetchTopicOffsets(topic).catch(() => [])).length === 2, { message: '2 partitions' })
      await waitFor(
        async () => {
          try {
            return (await producer.send({ topic, messages: [{ value: 'p1', partition: 1 }] }))[0]!.partition === 1
          } catch {
            return false
          }
        },
        { message: 'a send to partition 1' },
      )
      const seen = new Collector()
      const consumer = await t.consumer()
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({ eachMessage: seen.eachMessage })
      await seen.waitForCount(2)
      expect(seen.messages.find((m) => m.value === 'p1')!.partition).toBe(1)
    },
    { timeout: 60_000 },
  )

  contract(
    'a consumer with a short metadataMaxAge consumes partitions another client added',
    async (t) => {
      const topic = await t.topic(1)
      const consumer = await t.consumer({ metadataMaxAge: 500 })
      await consumer.subscribe({ topic, fromBeginning: true })
      const seen = new Collector()
      await t.runAndJoin(consumer, { eachMessage: seen.eachMessage })
      const other = await otherProcess(t)
      const admin = other.admin()
      await admin.connect()
      t.track(admin)
      await admin.createPartitions({ topicPartitions: [{ topic, count: 2 }] })
      await waitFor(async () => (await admin.fetchTopicOffsets(topic).catch(() => [])).length === 2, { message: '2 partitions' })
      const producer = other.producer()
      await producer.connect()
      t.track(producer)
      await producer.send({ topic, messages: [{ value: 'new-partition', partition: 1 }] })
      await seen.waitForCount(1, 45_000)
      expect(seen.messages[0]).toMatchObject({ partition: 1, value: 'new-partition' })
    },
    { timeout: 90_000 },
  )

  contract(
    'a consumer survives its topic being deleted and re-created elsewhere, then consumes the new topic',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      // not auto-creating: a restart after the deletion would otherwise create the topic again at once (on both
      // transports), and the deletion could be missed between two listTopics
      const consumer = await t.consumer({ groupId, metadataMaxAge: 500, allowAutoTopicCreation: false })
      const crashes: ConsumerCrashEvent[] = []
      consumer.on(consumer.events.CRASH, (e) => crashes.push(e))
      await consumer.subscribe({ topic, fromBeginning: true })
      const seen = new Collector()
      await t.runAndJoin(consumer, { eachMessage: seen.eachMessage })
      const other = await otherProcess(t)
      const admin = other.admin()
      await admin.connect()
      t.track(admin)
      await recreate(admin, topic, 1)
      const producer = other.producer()
      await producer.connect()
      t.track(producer)
      await producer.send({ topic, messages: [{ value: 'reborn' }] })
      await seen.waitForCount(1, 60_000)
      expect(seen.values()).toEqual(['reborn'])
      expect(crashes.filter((c) => !c.payload.restart)).toEqual([])
    },
    { timeout: 120_000 },
  )
})
