// A producer's maxInFlightRequests caps its operations in flight, as KafkaJS's per-broker request queue caps its
// requests: the ones beyond the cap wait in order, and producer.network.request_queue_size reports each change.
import type { InstrumentationEvent } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('max_in_flight')

type QueueSize = InstrumentationEvent<{ broker: string; clientId: string; queueSize: number }>

/** Holds the write lock of the topic's partition 0 (a send to it waits) until the returned release. */
async function holdPartitionZero(topic: string): Promise<() => Promise<void>> {
  const client = await t.db.pool.connect()
  await client.query('BEGIN')
  await client.query(
    `SELECT pg_advisory_xact_lock(${t.db.schema}.metadata_queue_lock_key(t.id, 0)) FROM ${t.db.schema}.metadata_queue_topic t WHERE t.topic_name = $1`,
    [topic],
  )
  return async () => {
    await client.query('COMMIT')
    client.release()
  }
}

describe('producer maxInFlightRequests', () => {
  for (const cap of [1, undefined]) {
    it(`maxInFlightRequests ${cap ?? 'unset'}: a send to a free partition ${cap ? 'waits behind' : 'overtakes'} one stuck on a locked partition`, async () => {
      const topic = await t.createTopic(2)
      const producer = await t.producer(cap ? { maxInFlightRequests: cap } : {})
      // the topic's metadata is cached, so the sends below go straight to the write
      await producer.send({ topic, messages: [{ partition: 0, value: 'warm' }] })
      const sizes: QueueSize[] = []
      let queued!: () => void
      const firstQueued = new Promise<void>((resolve) => (queued = resolve))
      producer.on(producer.events.REQUEST_QUEUE_SIZE, (e) => {
        sizes.push(e as QueueSize)
        queued()
      })
      const release = await holdPartitionZero(topic)
      const done: number[] = []
      const stuck = producer.send({ topic, messages: [{ partition: 0, value: 'p0' }] }).then(() => done.push(0))
      const free = producer.send({ topic, messages: [{ partition: 1, value: 'p1' }] }).then(() => done.push(1))
      if (cap) await firstQueued
      else await free
      await release()
      await Promise.all([stuck, free])
      if (cap) {
        expect(done).toEqual([0, 1])
        expect(sizes.map((e) => e.payload.queueSize)).toEqual([1, 0])
        expect(sizes[0]).toEqual({
          id: expect.any(Number),
          timestamp: expect.any(Number),
          type: 'producer.network.request_queue_size',
          payload: { broker: expect.stringMatching(/:\d+$/), clientId: 'max_in_flight', queueSize: 1 },
        })
      } else {
        expect(done).toEqual([1, 0])
        expect(sizes).toEqual([])
      }
    })
  }

  it('twelve concurrent sends: their writes never overlap, and all arrive', async () => {
    const topic = await t.createTopic(3)
    const producer = await t.producer({ maxInFlightRequests: 1 })
    const writes: Array<{ sentAt: number; duration: number }> = []
    producer.on(producer.events.REQUEST, (e) => {
      const p = e.payload as { apiName: string; sentAt: number; duration: number }
      if (p.apiName === 'Produce') writes.push(p)
    })
    await Promise.all(Array.from({ length: 12 }, (_, i) => producer.send({ topic, messages: [{ partition: i % 3, value: `m${i}` }] })))
    // each write statement (one may carry several sends of a partition) begins once the one before it has ended
    expect(writes.length).toBeGreaterThan(0)
    writes.sort((a, b) => a.sentAt - b.sentAt)
    for (let i = 1; i < writes.length; i++) expect(writes[i]!.sentAt).toBeGreaterThanOrEqual(writes[i - 1]!.sentAt + writes[i - 1]!.duration)
    const admin = t.kafka.admin()
    await admin.connect()
    try {
      const offsets = await admin.fetchTopicOffsets(topic)
      expect(offsets.map((o) => Number(o.high)).reduce((a, b) => a + b)).toBe(12)
    } finally {
      await admin.disconnect()
    }
  })
})
