// The leader-run default assigner and lease re-acquisition (issue #13 items 5 and 6), on pgQueue.
import { describe, expect, it } from 'vitest'
import type { ConsumerGroupJoinEvent } from 'kafkajs'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('group_protocol')

async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('group protocol', () => {
  it('different subscriptions (A: t1 + t2, B: t2): the default assigner leaves no partition unowned', async () => {
    const t1 = await t.createTopic(1, 't1')
    const t2 = await t.createTopic(2, 't2')
    const groupId = uniqueName('g')
    const joins = new Map<string, ConsumerGroupJoinEvent>()
    const got = new Set<string>()
    for (const [name, topics] of [
      ['a', [t1, t2]],
      ['b', [t2]],
    ] as const) {
      const c = await t.consumer({ groupId })
      c.on(c.events.GROUP_JOIN, (e) => void joins.set(name, e))
      await c.subscribe({ topics: [...topics], fromBeginning: true })
      await c.run({ eachMessage: async ({ topic, partition }) => void got.add(`${topic}/${partition}`) })
      await waitUntil(() => joins.has(name), `${name} joined`)
    }
    const owned = () =>
      [...joins.values()].flatMap((e) => Object.entries(e.payload.memberAssignment).flatMap(([tp, ps]) => ps.map((p) => `${tp}/${p}`)))
    await waitUntil(() => owned().length === 3, 'three owned partitions')
    const producer = await t.producer()
    await producer.send({ topic: t1, messages: [{ value: 'x', partition: 0 }] })
    await producer.send({
      topic: t2,
      messages: [
        { value: 'y', partition: 0 },
        { value: 'z', partition: 1 },
      ],
    })
    await waitUntil(() => got.size === 3, 'a message from every partition')
    console.log(`assignment: ${[...joins].map(([n, e]) => `${n}=${JSON.stringify(e.payload.memberAssignment)}`).join(' ')}`)
    expect(new Set(owned())).toEqual(new Set([`${t1}/0`, `${t2}/0`, `${t2}/1`]))
    expect(joins.get('b')!.payload.memberAssignment[t1]).toBeUndefined()
    expect(joins.get('a')!.payload.leaderId).toBe(joins.get('b')!.payload.leaderId)
    expect(joins.get('a')!.payload.groupProtocol).toBe('RoundRobinAssigner')
  }, 60_000)

  it('a lease taken by another member and given back: the partition is taken again afresh, not left stuck', async () => {
    const topic = await t.createTopic(1)
    const groupId = uniqueName('g')
    const producer = await t.producer()
    const c = await t.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 200 })
    const seen: string[] = []
    await c.subscribe({ topic, fromBeginning: true })
    await c.run({ autoCommitThreshold: 1, eachMessage: async ({ message }) => void seen.push(message.value!.toString()) })
    await producer.send({ topic, messages: [0, 1, 2, 3].map((n) => ({ value: `v${n}`, partition: 0 })) })
    await waitUntil(() => seen.length >= 4, 'four messages')
    const lease = `"${t.db.schema}".metadata_queue_partition_lease`
    // another member holds the lease for a moment: our commits are refused and the partition revoked ...
    await t.db.pool.query(`UPDATE ${lease} SET lock_owner = 'someone-else' WHERE consumer_group = $1`, [groupId])
    await producer.send({ topic, messages: [{ value: 'v4', partition: 0 }] })
    // ... then gives it back before our next renewal
    await t.db.pool.query(`DELETE FROM ${lease} WHERE consumer_group = $1`, [groupId])
    await producer.send({ topic, messages: [5, 6, 7, 8, 9].map((n) => ({ value: `v${n}`, partition: 0 })) })
    await waitUntil(() => seen.includes('v9'), 'v9 delivered')
    const offset = async () =>
      (
        await t.db.pool.query<{ o: string }>(
          `SELECT offset_value::text AS o FROM "${t.db.schema}".metadata_queue_consumer_offset WHERE consumer_group = $1`,
          [groupId],
        )
      ).rows[0]?.o
    await waitUntil(async () => (await offset()) === '10', 'committed offset 10')
    console.log(`deliveries after the lease came back: ${seen.join(',')}; committed ${await offset()}`)
    for (let n = 0; n < 10; n++) expect(seen).toContain(`v${n}`)
  }, 60_000)
})
