import { describe, expect, it } from 'vitest'
import { attachConsumerMetrics, consumerRegistryFor, contextOf, createMetrics, health } from '../../../src/ops/index.js'
import { deferred } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('ops_queue_time')

describe('consumer hooks', () => {
  it('records enqueue-to-handler time per priority band', async () => {
    const topic = uniqueName('qt')
    const admin = t.kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
    await admin.disconnect()
    const producer = await t.producer()
    // priority 1 is band 0, priority 8 band 2 (default bands); the producer's timestamp is not the enqueue time
    const messages = [
      { value: 'a', priority: 1, timestamp: '1000' },
      { value: 'b', priority: 8 },
    ] as never[]
    await producer.send({ topic, messages })
    // not a synchronisation: the time the rows spend in the queue, which the metric must show
    await new Promise((r) => setTimeout(r, 50))

    const metrics = createMetrics()
    const consumer = await t.consumer()
    attachConsumerMetrics(consumer, metrics)
    const done = deferred()
    let seen = 0
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async () => void (++seen === 2 && done.resolve()) })
    await done.promise
    await consumer.stop()

    const text = await metrics.registry.metrics()
    const count = (band: string) => new RegExp(`messaging_queue_time_seconds_count\\{[^}]*topic="${topic}"[^}]*messaging_priority="${band}"\\} 1`)
    expect(text).toMatch(count('0'))
    expect(text).toMatch(count('2'))
    const sum = Number(new RegExp(`messaging_queue_time_seconds_sum\\{[^}]*messaging_priority="0"\\} (\\S+)`).exec(text)![1])
    expect(sum).toBeGreaterThanOrEqual(0.04) // waited >= 50 ms in the queue
    expect(sum).toBeLessThan(60) // measured from enqueued_at, not from the producer's timestamp (1970)
  })

  it('every consumer reports itself to its Kafka’s health check', async () => {
    const ctx = contextOf(t.kafka)!
    const topic = uniqueName('hc')
    const consumer = await t.consumer()
    const admin = t.kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
    await admin.disconnect()
    await consumer.subscribe({ topic })
    const joined = deferred()
    consumer.on(consumer.events.GROUP_JOIN, () => joined.resolve())
    await consumer.run({ eachMessage: async () => {} })
    await joined.promise
    expect(consumerRegistryFor(ctx).snapshot().running).toBeGreaterThanOrEqual(1)
    expect((await health(ctx)).consumers.consumers.some((c) => c.state === 'running')).toBe(true)
    await consumer.stop()
  })
})
