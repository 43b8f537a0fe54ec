// Pool exhaustion said only "timeout exceeded when trying to connect". Now the error names the pool, its size, the
// wait and the settings to change, and is still a retriable KafkaJS connection error underneath.
import { describe, expect, it } from 'vitest'
import { KafkaJSError } from '../../../src/kafkajs/errors.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('security_pool')

describe('pool exhaustion', () => {
  it('names the pool, its size, the wait and DATAHUB_PGQUEUE_MAX_CONNECTIONS; consumers that cannot start say so too', async () => {
    const kafka = t.newKafka({ pool: { max: 2, connectionTimeoutMillis: 250 } })
    const topic = await t.createTopic(1, 'pool')
    const holders = [kafka.producer({ transactionalId: uniqueName('hold-a') }), kafka.producer({ transactionalId: uniqueName('hold-b') })]
    const plain = kafka.producer({ retry: { retries: 0 } })
    await Promise.all([...holders, plain].map((p) => p.connect()))
    // two open transactions hold both connections
    const txns = await Promise.all(holders.map((p) => p.transaction()))
    const err = (await plain.send({ topic, messages: [{ value: 'starved' }] }).then(
      () => undefined,
      (e: unknown) => e,
    )) as InstanceType<typeof KafkaJSError> & { cause?: Error }
    console.log(`pool: ${err?.name}: ${err?.message}`)
    expect(err).toBeInstanceOf(KafkaJSError)
    expect(err.cause?.name).toBe('KafkaJSConnectionError') // retriable, as before: the retrier rides out a busy pool
    expect(err.message).toContain(`all 2 connections of the pgQueue pool of schema "${t.db.schema}" were in use for 250 ms`)
    expect(err.message).toContain('DATAHUB_PGQUEUE_MAX_CONNECTIONS')
    expect(err.message).toContain('DATAHUB_PGQUEUE_WAIT_TIMEOUT_MILLIS')

    // many consumers on the starved client: their run() fails with the same explanation, not the bare pg-pool text
    const consumers = Array.from({ length: 4 }, () =>
      kafka.consumer({ groupId: uniqueName('pool-g'), sessionTimeout: 6000, heartbeatInterval: 500, retry: { retries: 0 } }),
    )
    const failures: string[] = []
    for (const c of consumers) {
      const started = await c
        .connect()
        .then(() => c.subscribe({ topic }).then(() => c.run({ eachMessage: async () => undefined })))
        .then(
          () => undefined,
          (e: Error) => e.message,
        )
      if (started) failures.push(started)
    }
    console.log(`pool: ${failures.length} of ${consumers.length} consumers refused: ${failures[0]}`)
    expect(failures.length).toBeGreaterThan(0)
    for (const f of failures) expect(f).toMatch(/DATAHUB_PGQUEUE_MAX_CONNECTIONS/)

    await Promise.all(txns.map((txn) => txn.abort()))
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)))
    await Promise.all([...holders, plain].map((p) => p.disconnect()))
  })
})
