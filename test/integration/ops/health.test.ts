import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Kafka } from '../../../src/kafka.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { ConsumerRegistry, contextOf, createOpsHandler, health, startOpsServer } from '../../../src/ops/index.js'
import { deferred, waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('ops_health')
const admin = t.kafka.admin()
beforeAll(() => admin.connect())
afterAll(() => admin.disconnect())

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('health', () => {
  it('is UP with the database reachable and no consumers', async () => {
    const report = await health(contextOf(t.kafka)!, { consumers: new ConsumerRegistry() })
    expect(report).toMatchObject({
      status: 'UP',
      transport: 'pgqueue',
      database: { reachable: true, latencyMs: expect.any(Number) },
      consumers: { running: 0, crashed: 0, allAlive: true, consumers: [] },
    })
  })

  it('is DOWN (503) when PostgreSQL cannot be reached', async () => {
    const port = await closedPort()
    const unreachable = new Kafka({
      logLevel: logLevel.NOTHING,
      pgqueue: { connectionString: `postgres://postgres@127.0.0.1:${port}/nowhere`, schema: t.db.schema },
    })
    const handler = createOpsHandler({ kafka: unreachable })
    const report = await handler.health()
    expect(report.status).toBe('DOWN')
    expect(report.database).toMatchObject({ reachable: false, latencyMs: null, error: expect.stringMatching(/ECONNREFUSED|connect/i) })
    await handler.close()

    const server = await startOpsServer({ kafka: unreachable, port: 0 })
    try {
      const res = await fetch(`${server.url}/health`)
      expect(res.status).toBe(503)
      expect(await res.json()).toMatchObject({ status: 'DOWN', database: { reachable: false } })
      // the messaging endpoints say the store is unavailable rather than failing with 500
      expect((await fetch(`${server.url}/openapi/operations/messaging/consumer/lag`)).status).toBe(503)
    } finally {
      await server.close()
    }
  })

  it('is DOWN when the schema is missing (the queue tables cannot be read)', async () => {
    const other = new Kafka({ logLevel: logLevel.NOTHING, pgqueue: { ...t.db.options, schema: `${t.db.schema}_none`, enabled: false } })
    const handler = createOpsHandler({ kafka: other })
    const report = await handler.health()
    expect(report.status).toBe('DOWN')
    expect(report.database!.reachable).toBe(false)
    await handler.close()
  })

  it('tracks running consumers and turns DOWN when one crashes for good, UP again once it is disconnected', async () => {
    const topic = uniqueName('health')
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
    const registry = new ConsumerRegistry()
    const ctx = contextOf(t.kafka)!

    const healthy = await t.consumer()
    registry.track(healthy)
    await healthy.subscribe({ topic })
    await healthy.run({ eachMessage: async () => {} })
    await waitFor(() => registry.snapshot().running === 1)
    expect((await health(ctx, { consumers: registry })).status).toBe('UP')

    const crashed = deferred()
    const doomed = await t.consumer({ retry: { retries: 0, initialRetryTime: 10, restartOnFailure: async () => false } })
    registry.track(doomed)
    doomed.on(doomed.events.CRASH, () => crashed.resolve())
    await doomed.subscribe({ topic, fromBeginning: true })
    await doomed.run({
      eachMessage: async () => {
        throw new Error('handler broke')
      },
    })
    await (await t.producer()).send({ topic, messages: [{ value: 'boom' }] })
    await crashed.promise
    const down = await health(ctx, { consumers: registry })
    expect(down.status).toBe('DOWN')
    expect(down.consumers).toMatchObject({ running: 1, crashed: 1, allAlive: false })
    expect(down.consumers.consumers.find((c) => c.state === 'crashed')!.error).toMatch(/handler broke/)
    // DataHub's healthCheckEnabled=false: consumers do not decide the status
    expect((await health(ctx, { consumers: registry, consumerHealthCheck: false })).status).toBe('UP')

    await doomed.disconnect()
    expect((await health(ctx, { consumers: registry })).status).toBe('UP')
    await healthy.stop()
    expect(registry.snapshot()).toMatchObject({ running: 0, allAlive: true })
  })
})
