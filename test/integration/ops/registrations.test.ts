import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PgQueueContext } from '../../../src/client/context.js'
import { contextOf, listRegistrations, registerConsumer, unregisterConsumer } from '../../../src/ops/index.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('ops_registrations')
const admin = t.kafka.admin()
let ctx: PgQueueContext
beforeAll(async () => {
  await admin.connect()
  ctx = contextOf(t.kafka)!
})
afterAll(() => admin.disconnect())

async function newTopic(): Promise<string> {
  const topic = uniqueName('reg')
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
  return topic
}

describe('registrations', () => {
  it('registers, lists (with heartbeat times) and unregisters', async () => {
    const topic = await newTopic()
    const other = await newTopic()
    const before = Date.now() - 5_000
    expect(await registerConsumer(ctx, { group: 'b-group', topic })).toEqual({ registered: true })
    await registerConsumer(ctx, { group: 'a-group', topic })
    await registerConsumer(ctx, { group: 'a-group', topic: other })

    const rows = await listRegistrations(ctx, { topic })
    expect(rows.map((r) => [r.consumerGroup, r.topicName])).toEqual([
      ['a-group', topic],
      ['b-group', topic],
    ])
    for (const r of rows) {
      expect(r.registeredAt).toBeGreaterThan(before)
      expect(r.lastHeartbeatAt).toBeGreaterThanOrEqual(r.registeredAt)
    }
    const all = await listRegistrations(ctx)
    expect(
      all
        .filter((r) => r.consumerGroup === 'a-group')
        .map((r) => r.topicName)
        .sort(),
    ).toEqual([topic, other].sort())

    expect(await unregisterConsumer(ctx, { group: 'a-group', topic })).toEqual({ deleted: true })
    expect(await unregisterConsumer(ctx, { group: 'a-group', topic })).toEqual({ deleted: false })
    expect((await listRegistrations(ctx, { topic })).map((r) => r.consumerGroup)).toEqual(['b-group'])
  })

  it('registering again is a heartbeat: lastHeartbeatAt moves, registeredAt stays', async () => {
    const topic = await newTopic()
    await registerConsumer(ctx, { group: 'g', topic })
    const [first] = await listRegistrations(ctx, { topic })
    await new Promise((r) => setTimeout(r, 20))
    await registerConsumer(ctx, { group: 'g', topic })
    const [second] = await listRegistrations(ctx, { topic })
    expect(second!.registeredAt).toBe(first!.registeredAt)
    expect(second!.lastHeartbeatAt).toBeGreaterThan(first!.lastHeartbeatAt)
  })

  it('answers 404 for an unknown topic and 400 for a missing group', async () => {
    const missing = uniqueName('missing')
    await expect(listRegistrations(ctx, { topic: missing })).rejects.toMatchObject({ status: 404 })
    await expect(registerConsumer(ctx, { group: 'g', topic: missing })).rejects.toMatchObject({ status: 404 })
    await expect(unregisterConsumer(ctx, { group: 'g', topic: missing })).rejects.toMatchObject({ status: 404 })
    await expect(registerConsumer(ctx, { group: ' ', topic: await newTopic() })).rejects.toMatchObject({ status: 400 })
    await expect(registerConsumer(ctx, {} as never)).rejects.toMatchObject({ status: 400 })
  })

  it('a running consumer keeps its group registered', async () => {
    const topic = await newTopic()
    const groupId = uniqueName('g')
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic })
    await consumer.run({ eachMessage: async () => {} })
    const row = await waitFor(async () => (await listRegistrations(ctx, { topic })).find((r) => r.consumerGroup === groupId))
    expect(row.topicName).toBe(topic)
    await consumer.stop()
  })
})
