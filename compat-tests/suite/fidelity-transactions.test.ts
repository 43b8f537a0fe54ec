import { describe, expect } from 'vitest'
import { Collector, contract, messages, uniqueName, waitFor, type Scope } from '../harness.js'

const needs = ['transactions' as const]

function txProducer(t: Scope) {
  return t.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 })
}

async function committedOffset(t: Scope, groupId: string, topic: string): Promise<string> {
  const [entry] = await (await t.admin()).fetchOffsets({ groupId, topics: [topic] })
  return entry!.partitions[0]!.offset
}

async function readAll(t: Scope, topic: string, n: number, config = {}) {
  const consumer = await t.consumer(config)
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen = new Collector()
  await consumer.run({ eachMessage: seen.eachMessage })
  await seen.waitForCount(n)
  return seen
}

describe('transactions fidelity', () => {
  contract(
    'an empty transaction can be committed, and a new transaction then works',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await txProducer(t)
      const empty = await producer.transaction()
      await empty.commit()
      expect(empty.isActive()).toBe(false)
      const tx = await producer.transaction()
      await tx.send({ topic, messages: [{ value: 'after-empty' }] })
      await tx.commit()
      const seen = await readAll(t, topic, 1)
      expect(seen.values()).toEqual(['after-empty'])
    },
    { needs },
  )

  contract(
    'an empty transaction can be aborted, and a new transaction then works',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await txProducer(t)
      const empty = await producer.transaction()
      await empty.abort()
      const tx = await producer.transaction()
      await tx.send({ topic, messages: [{ value: 'after-empty-abort' }] })
      await tx.commit()
      const seen = await readAll(t, topic, 1)
      expect(seen.values()).toEqual(['after-empty-abort'])
    },
    { needs },
  )

  contract(
    'several transactions in a row on one producer each commit their own messages',
    async (t) => {
      const topic = await t.topic(1)
      const producer = await txProducer(t)
      for (let i = 0; i < 3; i++) {
        const tx = await producer.transaction()
        await tx.send({ topic, messages: [{ value: `tx-${i}` }] })
        await tx.commit()
      }
      const seen = await readAll(t, topic, 3)
      expect(seen.values()).toEqual(['tx-0', 'tx-1', 'tx-2'])
    },
    { needs },
  )

  contract(
    'sendOffsets offsets are visible to fetchOffsets once the transaction commits',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const tx = await (await txProducer(t)).transaction()
      await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '3' }] }] })
      await tx.commit()
      await waitFor(async () => (await committedOffset(t, groupId, topic)) === '3', { message: 'offset 3' })
    },
    { needs },
  )

  contract(
    'sendOffsets offsets are absent after an abort: the earlier commit stays',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const admin = await t.admin()
      await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '1' }] })
      const tx = await (await txProducer(t)).transaction()
      await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '9' }] }] })
      await tx.abort()
      expect(await committedOffset(t, groupId, topic)).toBe('1')
    },
    { needs },
  )

  contract(
    'messages and offsets of one transaction commit together',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const tx = await (await txProducer(t)).transaction()
      await tx.send({ topic, messages: messages(2, 'together') })
      await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '2' }] }] })
      await tx.commit()
      await waitFor(async () => (await committedOffset(t, groupId, topic)) === '2', { message: 'offset 2' })
      const seen = await readAll(t, topic, 2)
      expect(seen.values()).toEqual(['together-0', 'together-1'])
    },
    { needs },
  )

  contract(
    'readUncommitted: true still receives committed transactional messages',
    async (t) => {
      const topic = await t.topic(1)
      const tx = await (await txProducer(t)).transaction()
      await tx.send({ topic, messages: messages(2, 'committed') })
      await tx.commit()
      const seen = await readAll(t, topic, 2, { readUncommitted: true })
      expect(seen.values()).toEqual(['committed-0', 'committed-1'])
    },
    { needs },
  )

  contract('readUncommitted: true receives plain messages produced after it joined', async (t) => {
    const topic = await t.topic(1)
    const consumer = await t.consumer({ readUncommitted: true })
    await consumer.subscribe({ topic })
    const seen = new Collector()
    await t.runAndJoin(consumer, { eachMessage: seen.eachMessage })
    await (await t.producer()).send({ topic, messages: messages(3, 'live') })
    await seen.waitForCount(3, 10_000)
    expect(seen.values()).toEqual(['live-0', 'live-1', 'live-2'])
  })
})
