import { describe, expect, it } from 'vitest'
import type { KafkaMessage } from 'kafkajs'
import { deferred } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('consumer_basic')

describe('produce and consume', () => {
  it('delivers every message of a keyed batch in order per partition, with offsets from 0', async () => {
    const topic = uniqueName('basic')
    const producer = await t.producer()
    const meta = await producer.send({
      topic,
      messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i % 3}`, value: `v${i}`, headers: { h: `x${i}` } })),
    })
    expect(meta.length).toBeGreaterThan(0)
    expect(meta.every((m) => m.baseOffset === '0')).toBe(true)

    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: Array<{ partition: number; message: KafkaMessage }> = []
    const done = deferred()
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.push({ partition, message })
        if (seen.length === 20) done.resolve()
      },
    })
    await done.promise
    const values = seen.map((s) => s.message.value!.toString())
    expect(new Set(values).size).toBe(20)
    for (const key of ['k0', 'k1', 'k2']) {
      const mine = seen.filter((s) => s.message.key!.toString() === key)
      expect(new Set(mine.map((s) => s.partition)).size).toBe(1)
      const order = mine.map((s) => Number(s.message.value!.toString().slice(1)))
      expect(order).toEqual([...order].sort((a, b) => a - b))
    }
    expect(seen[0].message.headers!.h).toBeInstanceOf(Buffer)
  })
})
