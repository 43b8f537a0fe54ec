// The two network events a contract test cannot provoke on a real broker: request_queue_size (callers waiting for a
// pooled connection) and request_timeout (a statement ended by statement_timeout), with KafkaJS's payload fields.
import type { InstrumentationEvent } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('admin_network_events')

describe('admin.network.* for database round trips', () => {
  it('request_queue_size reports callers waiting for the one pooled connection', async () => {
    const kafka = t.newKafka({ pool: { min: 0, max: 1 } } as never)
    const admin = kafka.admin()
    const sizes: Array<InstrumentationEvent<{ broker: string; clientId: string; queueSize: number }>> = []
    admin.on(admin.events.REQUEST_QUEUE_SIZE, (e) => sizes.push(e as never))
    await admin.connect()
    try {
      await Promise.all(Array.from({ length: 8 }, () => admin.listTopics()))
      expect(sizes.length).toBeGreaterThan(0)
      expect(sizes[0]!.payload).toEqual({ broker: expect.stringMatching(/:\d+$/), clientId: 'admin_network_events', queueSize: expect.any(Number) })
      expect(Math.max(...sizes.map((e) => e.payload.queueSize))).toBeGreaterThan(1)
    } finally {
      await admin.disconnect()
    }
  })

  it('request_timeout reports a statement ended by statement_timeout, with its apiName', async () => {
    const kafka = t.newKafka({ pool: { statementTimeoutMillis: 200 } } as never)
    const admin = kafka.admin({ retry: { retries: 0 } })
    const timeouts: Array<InstrumentationEvent<Record<string, unknown>>> = []
    admin.on(admin.events.REQUEST_TIMEOUT, (e) => timeouts.push(e as never))
    await admin.connect()
    const blocker = await t.db.pool.connect()
    try {
      await blocker.query('BEGIN')
      await blocker.query(`LOCK TABLE ${t.db.schema}.metadata_queue_topic IN ACCESS EXCLUSIVE MODE`)
      await expect(admin.listTopics()).rejects.toThrow()
      expect(timeouts).toHaveLength(1)
      expect(timeouts[0]!.payload).toEqual({
        broker: expect.any(String),
        clientId: 'admin_network_events',
        correlationId: expect.any(Number),
        createdAt: expect.any(Number),
        sentAt: expect.any(Number),
        pendingDuration: 0,
        apiName: 'Metadata',
        apiKey: 3,
        apiVersion: 0,
      })
    } finally {
      await blocker.query('ROLLBACK')
      blocker.release()
      await admin.disconnect()
    }
  })
})
