// KafkaJS's maxInFlightRequests (KafkaJS spec "emits the request queue size event" of the producer): requests
// beyond the cap wait in the client's request queue, and producer.network.request_queue_size reports its length.
import type { InstrumentationEvent } from 'kafkajs'
import { describe, expect } from 'vitest'
import { makeKafka } from '../backend.js'
import { contract, uniqueName } from '../harness.js'

describe('request queue size events (maxInFlightRequests: 1)', () => {
  contract('two concurrent sends of a producer with maxInFlightRequests 1 emit producer.network.request_queue_size', async (t) => {
    const topic = await t.topic(8)
    const clientId = uniqueName('rqs')
    const kafka = await makeKafka({ clientId })
    const producer = kafka.producer({ maxInFlightRequests: 1 })
    const seen: InstrumentationEvent<{ broker: string; clientId: string; queueSize: number }>[] = []
    producer.on(producer.events.REQUEST_QUEUE_SIZE, (e) => seen.push(e as never))
    await producer.connect()
    try {
      const messages = [0, 1, 2].map((partition) => ({ partition, value: `value-${partition}` }))
      const sent = await Promise.all([producer.send({ acks: -1, topic, messages }), producer.send({ acks: -1, topic, messages })])
      expect(sent.flat().map((m) => m.errorCode)).toEqual([0, 0, 0, 0, 0, 0])
      expect(seen.length).toBeGreaterThan(0)
      expect(seen[0]).toEqual({
        id: expect.any(Number),
        timestamp: expect.any(Number),
        type: 'producer.network.request_queue_size',
        payload: { broker: expect.any(String), clientId, queueSize: expect.any(Number) },
      })
      // the queue empties again once the requests are answered
      expect(seen.at(-1)!.payload.queueSize).toBe(0)
    } finally {
      await producer.disconnect()
    }
  })
})
