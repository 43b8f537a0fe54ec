import type { Consumer, ConsumerGroupJoinEvent } from 'kafkajs'
import { describe, expect } from 'vitest'
import { Collector, contract, messages, uniqueName, waitFor, type Received, type Scope } from '../harness.js'

/** Latest assignment of every member; resolves when they are disjoint and cover all partitions. */
async function startMembers(t: Scope, topic: string, groupId: string, count: number, partitions: number, seen: Collector) {
  const members: Consumer[] = []
  const latest = new Map<number, ConsumerGroupJoinEvent>()
  for (let i = 0; i < count; i++) {
    const member = await t.consumer({ groupId })
    member.on(member.events.GROUP_JOIN, (e) => void latest.set(i, e))
    await member.subscribe({ topic, fromBeginning: true })
    await member.run({ eachMessage: seen.eachMessage })
    members.push(member)
  }
  await waitForStableAssignment(latest, () => members.length, topic, partitions)
  return { members, latest }
}

async function waitForStableAssignment(latest: Map<number, ConsumerGroupJoinEvent>, memberCount: () => number, topic: string, partitions: number) {
  await waitFor(
    () => {
      if (latest.size < memberCount()) return false
      const assigned = [...latest.values()].flatMap((e) => e.payload.memberAssignment[topic] ?? [])
      return assigned.length === partitions && new Set(assigned).size === partitions
    },
    { timeout: 40_000, message: `a stable assignment of ${partitions} partitions over ${memberCount()} members` },
  )
}

/** Per key: values in order of first delivery (redelivery after a rebalance is allowed). */
function firstDeliveriesByKey(got: Received[]): Map<string, string[]> {
  const out = new Map<string, string[]>()
  const seen = new Set<string>()
  for (const m of got) {
    if (seen.has(m.value!)) continue
    seen.add(m.value!)
    out.set(m.key!, [...(out.get(m.key!) ?? []), m.value!])
  }
  return out
}

describe('consumer groups', () => {
  contract('each group receives every message (fan-out to several groups)', async (t) => {
    const topic = await t.topic(2)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(10, 'm', ['a', 'b', 'c']) })
    const collectors = [new Collector(), new Collector(), new Collector()]
    for (const seen of collectors) {
      const consumer = await t.consumer()
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({ eachMessage: seen.eachMessage })
    }
    for (const seen of collectors) {
      await seen.waitForCount(10)
      expect(seen.values().sort()).toEqual(
        messages(10)
          .map((m) => m.value)
          .sort(),
      )
    }
  })

  contract('members of one group share the partitions: nothing lost, per-key order kept', async (t) => {
    const topic = await t.topic(4)
    const groupId = uniqueName('group')
    const seen = new Collector()
    await startMembers(t, topic, groupId, 3, 4, seen)
    const keys = Array.from({ length: 10 }, (_, i) => `key-${i}`)
    const producer = await t.producer()
    const sent = messages(200, 'm', keys)
    for (let i = 0; i < sent.length; i += 20) await producer.send({ topic, messages: sent.slice(i, i + 20) })
    await waitFor(() => new Set(seen.values()).size === 200, { timeout: 40_000, message: 'all 200 messages' })
    const byKey = firstDeliveriesByKey(seen.messages)
    for (const key of keys) {
      expect(byKey.get(key)).toEqual(sent.filter((m) => m.key === key).map((m) => m.value))
    }
  })

  contract('when a member leaves, the others take over its partitions', async (t) => {
    const topic = await t.topic(4)
    const groupId = uniqueName('group')
    const seen = new Collector()
    const { members, latest } = await startMembers(t, topic, groupId, 2, 4, seen)
    const leaving = members.pop()!
    latest.clear()
    await leaving.disconnect()
    await waitForStableAssignment(latest, () => 1, topic, 4)
    const producer = await t.producer()
    await producer.send({ topic, messages: messages(20, 'm', ['a', 'b', 'c', 'd', 'e', 'f']) })
    await waitFor(() => new Set(seen.values()).size === 20, { message: 'all 20 messages at the remaining member' })
  })

  contract('a consumer subscribed to two topics receives from both', async (t) => {
    const [a, b] = [await t.topic(1), await t.topic(2)]
    const producer = await t.producer()
    await producer.send({ topic: a, messages: messages(2, 'a') })
    await producer.send({ topic: b, messages: messages(2, 'b') })
    const consumer = await t.consumer()
    await consumer.subscribe({ topics: [a, b], fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(4)
    expect(seen.messages.filter((m) => m.topic === a).map((m) => m.value)).toEqual(['a-0', 'a-1'])
    expect(
      seen.messages
        .filter((m) => m.topic === b)
        .map((m) => m.value)
        .sort(),
    ).toEqual(['b-0', 'b-1'])
  })

  contract('a RegExp subscription matches existing topics', async (t) => {
    const prefix = uniqueName('re')
    await t.createTopics([
      { topic: `${prefix}_x`, numPartitions: 1 },
      { topic: `${prefix}_y`, numPartitions: 1 },
    ])
    const producer = await t.producer()
    await producer.send({ topic: `${prefix}_x`, messages: [{ value: 'x' }] })
    await producer.send({ topic: `${prefix}_y`, messages: [{ value: 'y' }] })
    const consumer = await t.consumer()
    await consumer.subscribe({ topics: [new RegExp(`^${prefix}_`)], fromBeginning: true })
    const seen = new Collector()
    await consumer.run({ eachMessage: seen.eachMessage })
    await seen.waitForCount(2)
    expect(seen.messages.map((m) => m.topic).sort()).toEqual([`${prefix}_x`, `${prefix}_y`])
  })
})
