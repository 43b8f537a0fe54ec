import { describe, expect, it } from 'vitest'
import type { Consumer, EachMessagePayload } from 'kafkajs'
import { deferred, waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('consumer_semantics')

const createTopic = (partitions: number) => t.createTopic(partitions, 'sem')

function joined(consumer: Consumer) {
  const d = deferred()
  consumer.on(consumer.events.GROUP_JOIN, () => d.resolve())
  return d.promise
}

const values = (seen: EachMessagePayload[]) => seen.map((p) => p.message.value!.toString())

describe('consumer semantics', () => {
  it('fromBeginning false only sees messages produced after joining; true sees everything', async () => {
    const topic = await createTopic(2)
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'old-1' }, { value: 'old-2' }] })

    const late = await t.consumer()
    await late.subscribe({ topic })
    const lateSeen: EachMessagePayload[] = []
    const early = await t.consumer()
    await early.subscribe({ topic, fromBeginning: true })
    const earlySeen: EachMessagePayload[] = []
    const lateJoined = joined(late)
    await late.run({ eachMessage: async (p) => void lateSeen.push(p) })
    await early.run({ eachMessage: async (p) => void earlySeen.push(p) })
    await lateJoined
    await producer.send({ topic, messages: [{ value: 'new-1' }] })
    await waitFor(() => lateSeen.length === 1 && earlySeen.length === 3)
    expect(values(lateSeen)).toEqual(['new-1'])
    expect(values(earlySeen).sort()).toEqual(['new-1', 'old-1', 'old-2'])
  })

  it('resumes after the last committed offset when the group restarts', async () => {
    const topic = await createTopic(1)
    const groupId = uniqueName('resume')
    const producer = await t.producer()
    await producer.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ value: `a${i}` })) })
    const first = await t.consumer({ groupId })
    await first.subscribe({ topic, fromBeginning: true })
    const seen: EachMessagePayload[] = []
    await first.run({ eachMessage: async (p) => void seen.push(p) })
    await waitFor(() => seen.length === 10)
    await first.disconnect()

    await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ value: `b${i}` })) })
    const second = await t.consumer({ groupId })
    await second.subscribe({ topic, fromBeginning: true })
    const again: EachMessagePayload[] = []
    await second.run({ eachMessage: async (p) => void again.push(p) })
    await waitFor(() => again.length === 5)
    expect(values(again)).toEqual(['b0', 'b1', 'b2', 'b3', 'b4'])
    expect(again[0].message.offset).toBe('10')
  })

  it('seek replays from the given offset', async () => {
    const topic = await createTopic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: Array.from({ length: 6 }, (_, i) => ({ value: `s${i}` })) })
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: EachMessagePayload[] = []
    await consumer.run({ eachMessage: async (p) => void seen.push(p) })
    await waitFor(() => seen.length === 6)
    consumer.seek({ topic, partition: 0, offset: '2' })
    await waitFor(() => seen.length === 10)
    expect(values(seen).slice(6)).toEqual(['s2', 's3', 's4', 's5'])
  })

  it('pause stops delivery for the paused partition only, resume continues', async () => {
    const topic = await createTopic(2)
    const producer = await t.producer()
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: EachMessagePayload[] = []
    await consumer.run({ eachMessage: async (p) => void seen.push(p) })
    consumer.pause([{ topic, partitions: [0] }])
    expect(consumer.paused()).toEqual([{ topic, partitions: [0] }])
    await producer.send({
      topic,
      messages: [
        { value: 'p0', partition: 0 },
        { value: 'p1', partition: 1 },
      ],
    })
    await waitFor(() => seen.length === 1)
    expect(values(seen)).toEqual(['p1'])
    consumer.resume([{ topic, partitions: [0] }])
    await waitFor(() => seen.length === 2)
    expect(values(seen)).toEqual(['p1', 'p0'])
  })

  it('every group receives every message (fan-out)', async () => {
    const topic = await createTopic(3)
    const producer = await t.producer()
    await producer.send({ topic, messages: Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `f${i}` })) })
    const seen = await Promise.all(
      [0, 1, 2].map(async () => {
        const c = await t.consumer()
        await c.subscribe({ topic, fromBeginning: true })
        const got: string[] = []
        await c.run({ eachMessage: async (p) => void got.push(p.message.value!.toString()) })
        return got
      }),
    )
    await waitFor(() => seen.every((g) => g.length === 30))
    for (const g of seen) expect(new Set(g).size).toBe(30)
  })

  it('a handler error commits what was resolved and redelivers the failed message', async () => {
    const topic = await createTopic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'ok-1' }, { value: 'boom' }, { value: 'ok-2' }] })
    const consumer = await t.consumer({ retry: { initialRetryTime: 50, retries: 5 } })
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: string[] = []
    let failures = 0
    await consumer.run({
      eachMessage: async ({ message }) => {
        const v = message.value!.toString()
        if (v === 'boom' && failures++ < 2) throw new Error('transient failure')
        seen.push(v)
      },
    })
    await waitFor(() => seen.length === 3)
    expect(seen).toEqual(['ok-1', 'boom', 'ok-2'])
    expect(failures).toBe(3)
  })

  it('members of one group share the partitions: nothing lost, order per key kept', async () => {
    const topic = await createTopic(4)
    const groupId = uniqueName('shared')
    const producer = await t.producer()
    const members = await Promise.all(
      [0, 1, 2]
        .map(() => t.newKafka())
        .map(async (k) => {
          const c = k.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 300, maxWaitTimeInMs: 500 })
          await c.connect()
          return c
        }),
    )
    const seen = new Map<string, number[]>()
    let total = 0
    for (const c of members) {
      await c.subscribe({ topic, fromBeginning: true })
      await c.run({
        eachMessage: async ({ message }) => {
          const [key, n] = message.value!.toString().split(':')
          seen.set(key, [...(seen.get(key) ?? []), Number(n)])
          total++
        },
      })
    }
    for (let round = 0; round < 10; round++) {
      await producer.send({ topic, messages: Array.from({ length: 100 }, (_, i) => ({ key: `k${i % 10}`, value: `k${i % 10}:${round * 100 + i}` })) })
    }
    await waitFor(() => total >= 1000, { timeout: 20_000 })
    for (const c of members) await c.disconnect()
    expect(total).toBe(1000)
    for (const [, ns] of seen) expect(ns).toEqual([...ns].sort((a, b) => a - b))
  })
})
