import kafkajs from 'kafkajs'
import { describe, expect } from 'vitest'
import { Collector, contract, messages, once, uniqueName, waitFor, type Scope } from '../harness.js'

const { KafkaJSNonRetriableError } = kafkajs
const needs = ['transactions' as const]

/** A producer that can run transactions (idempotent, one request in flight, as KafkaJS requires). */
function txProducer(t: Scope) {
  return t.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 })
}

/** A read-committed consumer reading `topic` from the beginning. */
async function reader(t: Scope, topic: string, groupId = uniqueName('group')) {
  const consumer = await t.consumer({ groupId, readUncommitted: false })
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen = new Collector()
  await consumer.run({ eachMessage: seen.eachMessage })
  return seen
}

describe('transactions', () => {
  contract(
    'committed transactional messages are delivered',
    async (t) => {
      const topic = await t.topic(2)
      const producer = await txProducer(t)
      const tx = await producer.transaction()
      await tx.send({ topic, messages: messages(3, 'tx', ['a', 'b']) })
      await tx.sendBatch({ topicMessages: [{ topic, messages: [{ key: 'a', value: 'batched' }] }] })
      expect(tx.isActive()).toBe(true)
      await tx.commit()
      expect(tx.isActive()).toBe(false)
      const seen = await reader(t, topic)
      await seen.waitForCount(4)
      expect(seen.values().sort()).toEqual(['batched', 'tx-0', 'tx-1', 'tx-2'])
    },
    { needs },
  )

  contract(
    'aborted messages are never delivered to read-committed consumers',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await txProducer(t)
      // two transactional ids: right after an abort Kafka may answer CONCURRENT_TRANSACTIONS for the same id
      const aborted = await (await txProducer(t)).transaction()
      await aborted.send({ topic, messages: messages(3, 'aborted') })
      await aborted.abort()
      const committed = await producer.transaction()
      await committed.send({ topic, messages: messages(2, 'committed') })
      await committed.commit()
      const seen = await reader(t, topic)
      // 'committed' follows 'aborted' in the partition, so seeing it means the aborted ones were passed
      await seen.waitForCount(2)
      expect(seen.values()).toEqual(['committed-0', 'committed-1'])
    },
    { needs },
  )

  contract(
    'messages of an open transaction stay invisible until it commits',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await txProducer(t)
      const tx = await producer.transaction()
      await tx.send({ topic, messages: [{ value: 'pending-0' }, { value: 'pending-1' }] })
      const consumer = await t.consumer({ readUncommitted: false })
      await consumer.subscribe({ topic, fromBeginning: true })
      const seen = new Collector()
      await t.runAndJoin(consumer, { eachMessage: seen.eachMessage })
      await once((l) => consumer.on(consumer.events.FETCH, l), { message: 'a second FETCH' })
      expect(seen.messages).toEqual([])
      await tx.commit()
      await seen.waitForCount(2)
      expect(seen.values()).toEqual(['pending-0', 'pending-1'])
    },
    { needs },
  )

  contract(
    'a plain send to a partition does not wait for an open transaction on it',
    async (t) => {
      const topic = await t.topic(1)
      const tx = await (await txProducer(t)).transaction()
      await tx.send({ topic, messages: [{ value: 'in-tx' }] })
      const plain = await t.producer()
      const [meta] = await plain.send({ topic, messages: [{ value: 'plain' }] })
      expect(meta!.errorCode).toBe(0)
      await tx.abort()
    },
    { needs: ['transactions', 'sendDuringOpenTransaction'] },
  )

  contract(
    'sendOffsets commits the group offsets with the transaction (and not when aborted)',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const admin = await t.admin()
      const offsetOf = async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions[0]!.offset

      // two transactional ids: right after an abort Kafka may answer CONCURRENT_TRANSACTIONS for the same id
      const aborted = await (await txProducer(t)).transaction()
      await aborted.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '7' }] }] })
      await aborted.abort()
      expect(await offsetOf()).toBe('-1')

      const tx = await (await txProducer(t)).transaction()
      await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '5' }] }] })
      await tx.commit()
      await waitFor(async () => (await offsetOf()) === '5', { message: 'committed offset 5' })
    },
    { needs },
  )

  contract(
    'consume-transform-produce: outputs and input offsets commit together',
    async (t) => {
      const [input, output] = [await t.topic(1), await t.topic(1)]
      const groupId = uniqueName('group')
      const plain = await t.producer()
      await plain.send({ topic: input, messages: messages(3, 'in') })
      const producer = await txProducer(t)
      const consumer = await t.consumer({ groupId })
      await consumer.subscribe({ topic: input, fromBeginning: true })
      let processed = 0
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          const tx = await producer.transaction()
          await tx.send({ topic: output, messages: [{ value: `out:${String(message.value)}` }] })
          await tx.sendOffsets({
            consumerGroupId: groupId,
            topics: [{ topic, partitions: [{ partition, offset: String(Number(message.offset) + 1) }] }],
          })
          await tx.commit()
          processed++
        },
      })
      await waitFor(() => processed === 3, { message: '3 processed inputs' })
      await consumer.disconnect()
      const [offsets] = await (await t.admin()).fetchOffsets({ groupId, topics: [input] })
      expect(offsets!.partitions[0]!.offset).toBe('3')
      const seen = await reader(t, output)
      await seen.waitForCount(3)
      expect(seen.values()).toEqual(['out:in-0', 'out:in-1', 'out:in-2'])
    },
    { needs },
  )

  contract('transaction() without a transactionalId is rejected', async (t) => {
    const producer = await t.producer()
    const err = await producer.transaction().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect((err as Error).message).toBe('Must provide transactional id for transactional producer')
  })

  contract(
    'a second transaction while one is open is rejected',
    async (t) => {
      const producer = await txProducer(t)
      const tx = await producer.transaction()
      const err = await producer.transaction().catch((e: unknown) => e)
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect((err as Error).message).toBe(
        'There is already an ongoing transaction for this producer. Please end the transaction before beginning another.',
      )
      await tx.abort()
    },
    { needs },
  )

  contract(
    'a finished transaction cannot be used again',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await txProducer(t)
      const tx = await producer.transaction()
      await tx.send({ topic, messages: [{ value: 'once' }] })
      await tx.commit()
      const err = await tx.send({ topic, messages: [{ value: 'twice' }] }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect((err as Error).message).toBe('Cannot continue to use transaction once ended')
    },
    { needs },
  )
})
