// Scenario 4 of issue #16: one consumer group used by DataHub's consumers and ours. The two do not share a
// protocol (DataHub leases single messages, we lease partitions), so the library refuses the group with Kafka's
// INCONSISTENT_GROUP_PROTOCOL error naming it, instead of processing messages a second time silently.
import type { Consumer, KafkaMessage } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { findDataHubPresence } from '../../../src/store/dataHubMembers.js'
import { drainDataHubGroup } from '../../datahub-client/drain.js'
import { deferred, waitFor } from '../../helpers/db.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useSharingFixture } from './sharing.js'

const f = useSharingFixture('dh_group')

/**
 * A consumer of ours on `group`. `refused` settles with the error that stopped it: run() rejecting (refused at
 * join) or a CRASH event (refused at a later heartbeat), whose restart flag must be false.
 */
async function ourConsumer(
  group: string,
  topic: string,
  seen: string[],
): Promise<{ refused: Promise<Error>; joined: Promise<void>; consumer: Consumer }> {
  const consumer = await f.consumer({ groupId: group, heartbeatInterval: 300 })
  const refused = deferred<Error>()
  const joined = deferred()
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    expect(payload.restart, 'restart after the refusal').toBe(false)
    refused.resolve(payload.error)
  })
  consumer.on(consumer.events.GROUP_JOIN, () => joined.resolve())
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer
    .run({ eachMessage: async ({ message }: { message: KafkaMessage }) => void seen.push(message.value!.toString()) })
    .catch((e: Error) => refused.resolve(e))
  return { refused: refused.promise, joined: joined.promise, consumer }
}

const dataHubValues = (lines: string[]) => lines.filter((l) => l.startsWith('m ')).map((l) => l.split(' ')[3])

/** The refusal is Kafka's INCONSISTENT_GROUP_PROTOCOL naming the group (itself, or the cause of the crash). */
function expectRefusal(error: Error, group: string): void {
  let e: (Error & { type?: string; retriable?: boolean; cause?: unknown }) | undefined = error
  while (e && e.name !== 'KafkaJSProtocolError') e = e.cause as typeof e
  expect(e, `${error.name}: ${error.message}`).toBeDefined()
  expect(e!.type).toBe('INCONSISTENT_GROUP_PROTOCOL')
  expect(e!.retriable).toBe(false)
  expect(e!.message).toContain(JSON.stringify(group))
}

describe('one group, both client families (scenario 4)', () => {
  it('a consumer of ours refuses to join a group DataHub consumers are polling, and processes nothing', async () => {
    const topic = await f.createTopic(2, 'dh-group')
    const group = uniqueName('shared')
    const dataHub = f.dataHubConsumer(topic, group)
    await dataHub.waitForLine((l) => l === 'ready')
    const producer = await f.producer()
    const values = Array.from({ length: 100 }, (_, i) => `v${i}`)
    await producer.send({ topic, messages: values.map((value, i) => ({ key: `k${i % 8}`, value })) })

    const seen: string[] = []
    const ours = await ourConsumer(group, topic, seen)
    expectRefusal(await ours.refused, group)
    await waitFor(() => dataHubValues(dataHub.lines).length >= 100, { timeout: 20_000 })
    expect(seen, 'messages our refused consumer processed').toEqual([])
    expect(dataHubValues(dataHub.lines).sort()).toEqual([...values].sort())
    dataHub.proc.kill('SIGTERM')
    await dataHub.exited
  })

  it('a consumer of ours stops with the same error once DataHub starts polling its group; nothing is lost', async () => {
    const topic = await f.createTopic(2, 'dh-late')
    const group = uniqueName('shared')
    const seen: string[] = []
    const ours = await ourConsumer(group, topic, seen)
    await ours.joined
    const producer = await f.producer()
    const first = Array.from({ length: 50 }, (_, i) => `a${i}`)
    await producer.send({ topic, messages: first.map((value, i) => ({ key: `k${i % 8}`, value })) })
    await waitFor(() => seen.length >= 50, { timeout: 20_000 })

    const dataHub = f.dataHubConsumer(topic, group)
    expectRefusal(await ours.refused, group)
    const second = Array.from({ length: 50 }, (_, i) => `b${i}`)
    await producer.send({ topic, messages: second.map((value, i) => ({ key: `k${i % 8}`, value })) })
    await waitFor(() => dataHubValues(dataHub.lines).filter((v) => v.startsWith('b')).length >= 50, { timeout: 20_000 })
    const both = new Set([...seen, ...dataHubValues(dataHub.lines)])
    expect([...both].sort(), 'every message processed by one family or the other').toEqual([...first, ...second].sort())
    expect(
      seen.filter((v) => v.startsWith('b')),
      'messages our stopped consumer processed after DataHub joined',
    ).toEqual([])
    dataHub.proc.kill('SIGTERM')
    await dataHub.exited
  })

  it('is not refused by what DataHub left behind, by another topic of the group, or by our own earlier members', async () => {
    const topic = await f.createTopic(2, 'dh-past')
    const other = await f.createTopic(1, 'dh-other')
    const group = uniqueName('migrated')
    const producer = await f.producer()
    await producer.send({ topic, messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i % 4}`, value: `old${i}` })) })
    // DataHub consumed the group before (offsets, __acked__ markers, a registration), then stopped polling
    expect(await drainDataHubGroup(f.dataHub(), group, topic)).toHaveLength(20)
    await f.sql(`UPDATE ${f.tables.consumerRegistration} SET last_heartbeat_at = now() - interval '31 seconds' WHERE consumer_group = $1`, [group])
    // and is still polling the same group name on another topic
    await f.dataHub().register(group, await f.topicId(other))
    await producer.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ key: `k${i % 4}`, value: `new${i}` })) })

    const first = await f.consumeOurs(topic, 10, { groupId: group })
    expect(first.map((m) => m.value).sort(), 'our consumer continues after the DataHub commits').toEqual(
      Array.from({ length: 10 }, (_, i) => `new${i}`).sort(),
    )
    // a member of ours joins right after another one left: its registration beat is ours, not DataHub's
    await producer.send({ topic, messages: [{ key: 'k0', value: 'last' }] })
    expect((await f.consumeOurs(topic, 1, { groupId: group })).map((m) => m.value)).toEqual(['last'])
  })

  it('a member running a library version from before library_heartbeat_at is not taken for DataHub', async () => {
    const topic = await f.createTopic(2, 'old-member')
    const group = uniqueName('upgrading')
    const topicId = await f.topicId(topic)
    // what the old heartbeat statement leaves: member and registration beat at the same now(), no library stamp
    await f.sql(
      `WITH m AS (
         INSERT INTO ${f.tables.groupMember} (consumer_group, member_id, client_id, client_host, topics, session_timeout_ms)
         VALUES ($1, 'old-member', 'old', 'host', ARRAY[$3], 30000)
       )
       INSERT INTO ${f.tables.consumerRegistration} (consumer_group, topic_id) VALUES ($1, $2)`,
      [group, topicId, topic],
    )
    expect(await findDataHubPresence(f.db.pool, f.tables, group, [topicId])).toEqual([])
    // a DataHub poll after that beat is seen
    await f.dataHub().register(group, topicId)
    expect(await findDataHubPresence(f.db.pool, f.tables, group, [topicId])).toMatchObject([{ kind: 'registration', detail: topic }])
  })

  it('a DataHub consumer killed holding message leases makes ours wait until they lapse (a handover); then nothing is lost', async () => {
    const topic = await f.createTopic(1, 'dh-killed')
    const group = uniqueName('shared')
    const producer = await f.producer()
    await producer.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: `m${i}` })) })
    const dataHub = f.dataHubConsumer(topic, group, { HOLD: '1', MAX: '4' })
    await dataHub.waitForLine((l) => l === 'holding')
    dataHub.proc.kill('SIGKILL')
    await dataHub.exited
    // its registration goes quiet (as 30 s after its last poll); its leases hold for DataHub's visibility timeout
    await f.sql(`UPDATE ${f.tables.consumerRegistration} SET last_heartbeat_at = now() - interval '31 seconds' WHERE consumer_group = $1`, [group])
    const warnings: string[] = []
    // leases that do not move are a consumer gone, not one at work: ours waits for them (issue 34 item 4; before,
    // it was refused with INCONSISTENT_GROUP_PROTOCOL until they lapsed)
    const consuming = f.consumeOurs(topic, 10, { groupId: group, warnings, timeoutMs: 30_000 })
    await waitFor(() => warnings.some((w) => w.startsWith('Waiting for the DataHub consumers')), { timeout: 10_000 })
    await f.sql(`UPDATE ${f.tables.messageGroupLease} SET locked_until = now() - interval '1 second' WHERE consumer_group = $1`, [group])
    const after = await consuming
    expect(
      after.map((m) => m.value),
      'the killed consumer never committed: every message, in order',
    ).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`))
  })

  it("admin will not move a group's offsets under DataHub consumers (their next commit would undo it)", async () => {
    const topic = await f.createTopic(1, 'dh-admin')
    const group = uniqueName('shared')
    const producer = await f.producer()
    await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ key: 'k', value: `m${i}` })) })
    const dataHub = f.dataHubConsumer(topic, group)
    await waitFor(() => dataHubValues(dataHub.lines).length >= 5, { timeout: 20_000 })
    const admin = f.kafka.admin()
    await admin.connect()
    try {
      const refused = /no running instances: DataHub's own consumers use it/
      await expect(admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '0' }] })).rejects.toThrow(refused)
      await expect(admin.resetOffsets({ groupId: group, topic, earliest: true })).rejects.toThrow(refused)
      dataHub.proc.kill('SIGTERM')
      await dataHub.exited
      await f.sql(`UPDATE ${f.tables.consumerRegistration} SET last_heartbeat_at = now() - interval '31 seconds' WHERE consumer_group = $1`, [group])
      await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '2' }] })
      expect((await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0].partitions).toMatchObject([{ partition: 0, offset: '2' }])
    } finally {
      await admin.disconnect()
    }
  })
})
