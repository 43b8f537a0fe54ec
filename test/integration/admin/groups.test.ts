import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AssignerProtocol } from '../../../src/kafkajs/exports.js'
import { KafkaJSDeleteGroupsError, KafkaJSNonRetriableError, KafkaJSProtocolError } from '../../../src/kafkajs/errors.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('admin_groups')
const admin = t.kafka.admin()
beforeAll(() => admin.connect())
afterAll(() => admin.disconnect())

async function newTopic(numPartitions = 2): Promise<string> {
  const topic = uniqueName('grp')
  await admin.createTopics({ topics: [{ topic, numPartitions }] })
  return topic
}

/** A group with committed offsets and no members. */
async function idleGroup(topic: string): Promise<string> {
  const groupId = uniqueName('idle')
  await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '0' }] })
  return groupId
}

/** A running one-member group; resolves once the member is live. */
async function runningGroup(topic: string) {
  const groupId = uniqueName('live')
  const consumer = await t.consumer({ groupId })
  await consumer.subscribe({ topic })
  await consumer.run({ eachMessage: async () => {} })
  await waitFor(async () => (await admin.describeGroups([groupId])).groups[0]!.state === 'Stable')
  return { groupId, consumer }
}

const rejection = async (p: Promise<unknown>): Promise<any> =>
  p.then(
    () => expect.unreachable('should reject'),
    (e: unknown) => e,
  )

describe('listGroups / describeGroups', () => {
  it('lists groups with offsets or members as consumer groups', async () => {
    const topic = await newTopic()
    const idle = await idleGroup(topic)
    const { groupId: live, consumer } = await runningGroup(topic)
    const { groups } = await admin.listGroups()
    expect(groups).toEqual(
      expect.arrayContaining([
        { groupId: idle, protocolType: 'consumer' },
        { groupId: live, protocolType: 'consumer' },
      ]),
    )
    await consumer.disconnect()
  })

  it('describes running, idle and unknown groups as Stable, Empty and Dead', async () => {
    const topic = await newTopic(3)
    const idle = await idleGroup(topic)
    const { groupId: live, consumer } = await runningGroup(topic)
    const unknown = uniqueName('nobody')
    const { groups } = await admin.describeGroups([live, idle, unknown])
    expect(groups.map((g) => [g.groupId, g.state])).toEqual([
      [live, 'Stable'],
      [idle, 'Empty'],
      [unknown, 'Dead'],
    ])
    const [stable, empty, dead] = groups
    expect(stable).toMatchObject({ protocolType: 'consumer', protocol: 'RoundRobinAssigner' })
    expect(stable!.members).toHaveLength(1)
    const member = stable!.members[0]!
    expect(member.clientId).toBe('admin_groups')
    expect(AssignerProtocol.MemberMetadata.decode(member.memberMetadata)!.topics).toEqual([topic])
    expect(AssignerProtocol.MemberAssignment.decode(member.memberAssignment)!.assignment).toEqual({ [topic]: [0, 1, 2] })
    expect(empty).toMatchObject({ members: [], protocolType: 'consumer' })
    expect(dead).toMatchObject({ members: [], protocolType: '', protocol: '' })
    await consumer.disconnect()
    expect((await admin.describeGroups([live])).groups[0]!.state).toBe('Empty')
  })

  it('describes any number of groups in two round trips (the group list and one read of all of them)', async () => {
    const topic = await newTopic()
    const { groupId: live, consumer } = await runningGroup(topic)
    const idle = await Promise.all(Array.from({ length: 6 }, () => idleGroup(topic)))
    const ids = [live, ...idle, uniqueName('nobody')]
    const one = await Promise.all(ids.map(async (id) => (await admin.describeGroups([id])).groups[0]))
    const requests: unknown[] = []
    const off = admin.on(admin.events.REQUEST, (e) => requests.push(e))
    const { groups } = await admin.describeGroups(ids)
    off()
    expect(requests).toHaveLength(2)
    expect(groups).toEqual(one)
    await consumer.disconnect()
  })
})

describe('deleteGroups', () => {
  it('deletes an idle group with its offsets', async () => {
    const topic = await newTopic()
    const groupId = await idleGroup(topic)
    expect(await admin.deleteGroups([groupId])).toEqual([{ groupId, errorCode: 0 }])
    expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain(groupId)
    expect((await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions.map((p) => p.offset)).toEqual(['-1', '-1'])
    expect((await admin.describeGroups([groupId])).groups[0]!.state).toBe('Dead')
  })

  it('rejects with KafkaJSDeleteGroupsError for running and unknown groups, deleting the others', async () => {
    const topic = await newTopic()
    const idle = await idleGroup(topic)
    const { groupId: live, consumer } = await runningGroup(topic)
    const unknown = uniqueName('nobody')
    const err = await rejection(admin.deleteGroups([live, idle, unknown]))
    expect(err).toBeInstanceOf(KafkaJSDeleteGroupsError)
    expect(err.message).toBe('Error in DeleteGroups')
    expect(err.groups).toHaveLength(2)
    expect(err.groups[0]).toMatchObject({ groupId: live, errorCode: 68 })
    expect(err.groups[0].error).toBeInstanceOf(KafkaJSProtocolError)
    expect(err.groups[0].error).toMatchObject({ type: 'NON_EMPTY_GROUP', message: 'The group is not empty' })
    expect(err.groups[1]).toMatchObject({ groupId: unknown, errorCode: 69 })
    expect(err.groups[1].error).toMatchObject({ type: 'GROUP_ID_NOT_FOUND' })
    const listed = (await admin.listGroups()).groups.map((g) => g.groupId)
    expect(listed).toContain(live)
    expect(listed).not.toContain(idle)
    await consumer.disconnect()
    expect(await admin.deleteGroups([live])).toEqual([{ groupId: live, errorCode: 0 }])
  })

  it('validates like KafkaJS', async () => {
    const err = await rejection(admin.deleteGroups(undefined as never))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Invalid groupIds array undefined')
    await expect(admin.deleteGroups([1] as never)).rejects.toThrow('Invalid groupId name: true')
    await expect(admin.deleteGroups([])).resolves.toEqual([])
  })
})
