// KafkaJS's offset manager semantics (issue #13 items 1 and 6): the next fetch starts after the last resolved
// offset, so a message the handler did not resolve is delivered again, and committed offsets never pass it.
import { describe, expect } from 'vitest'
import { contract, messages, uniqueName, waitFor } from '../harness.js'

describe('consumer: resolved offsets', () => {
  contract(
    'eachBatch resolving only the first message of each batch: the rest are delivered again, in order',
    async (t) => {
      const topic = await t.topic(1)
      const groupId = uniqueName('group')
      const producer = await t.producer()
      await producer.send({ topic, messages: messages(20) })
      const consumer = await t.consumer({ groupId })
      await consumer.subscribe({ topic, fromBeginning: true })
      const resolved: string[] = []
      await consumer.run({
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset }) => {
          const first = batch.messages[0]
          if (!first) return
          resolved.push(first.offset)
          resolveOffset(first.offset)
        },
      })
      await waitFor(() => resolved.length >= 20, { message: '20 resolved messages', timeout: 60_000 })
      await consumer.disconnect()
      expect(resolved).toEqual(Array.from({ length: 20 }, (_, i) => String(i)))
      const [committed] = await (await t.admin()).fetchOffsets({ groupId, topics: [topic] })
      expect(committed!.partitions[0]!.offset).toBe('20')
    },
    { timeout: 90_000 },
  )

  contract('eachBatch resolving nothing: the same messages come back and nothing is committed', async (t) => {
    const topic = await t.topic(1)
    const groupId = uniqueName('group')
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(5) })
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    const firsts: string[] = []
    await consumer.run({
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch }) => {
        if (batch.messages[0]) firsts.push(batch.messages[0].offset)
      },
    })
    await waitFor(() => firsts.length >= 3, { message: 'three deliveries' })
    await consumer.disconnect()
    expect(new Set(firsts)).toEqual(new Set(['0']))
    const [committed] = await (await t.admin()).fetchOffsets({ groupId, topics: [topic] })
    expect(committed!.partitions[0]!.offset).toBe('-1')
  })
})
