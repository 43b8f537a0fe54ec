// Dead-lettering with priorities: the urgent poison message is read before older, less urgent messages; moving it
// (sendOffsets of its offset + 1) must not count those as processed. Found by the randomized checker (`lost` in
// its dead-letter group with priorities).
import { describe, expect, it } from 'vitest'
import { deadLetter } from '../../../src/deadLetter/index.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('dl_priorities')

describe('dead-lettering an urgent message', () => {
  it('the older, less urgent messages of its partition are all still handled', async () => {
    const topic = await t.createTopic(1)
    const groupId = uniqueName('g')
    const producer = await t.producer()
    const normal = ['n0', 'n1', 'n2'].map((value) => ({ value, partition: 0 }))
    await producer.send({ topic, messages: [...normal, { value: 'poison', partition: 0, priority: 2 }, { value: 'n3', partition: 0 }] as never[] })
    const dl = deadLetter(t.kafka as never, {
      groupId,
      topic: `${topic}.dlq`,
      maxAttempts: 2,
      backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 },
    })
    await dl.connect()
    const handled: string[] = []
    let all!: () => void
    const done = new Promise<void>((r) => (all = r))
    let moved!: () => void
    const deadLettered = new Promise<void>((r) => (moved = r))
    dl.on(dl.events.DEAD_LETTER, () => moved())
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: dl.eachMessage(async ({ message }) => {
        const value = message.value!.toString()
        if (value === 'poison') throw new Error('cannot handle it')
        handled.push(value)
        if (handled.length === 4) all()
      }),
    })
    await deadLettered
    await consumer.disconnect()
    // a new member of the group starts where the group's committed offsets say
    const next = await t.consumer({ groupId })
    await next.subscribe({ topic, fromBeginning: true })
    await next.run({
      eachMessage: async ({ message }) => {
        const value = message.value!.toString()
        if (!handled.includes(value)) handled.push(value)
        if (['n0', 'n1', 'n2', 'n3'].every((v) => handled.includes(v))) all()
      },
    })
    await done
    expect([...handled].sort()).toEqual(['n0', 'n1', 'n2', 'n3'])
    await dl.disconnect()
  }, 30_000)
  it('... also when its member left after a failed attempt and a new member of the group moves it', async () => {
    const topic = await t.createTopic(1)
    const groupId = uniqueName('g')
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [...['n0', 'n1', 'n2'].map((value) => ({ value, partition: 0 })), { value: 'poison', partition: 0, priority: 2 }] as never[],
    })
    const dl = deadLetter(t.kafka as never, {
      groupId,
      topic: `${topic}.dlq`,
      maxAttempts: 2,
      backoff: { initialMs: 60_000, maxMs: 60_000, factor: 1, jitter: 0 },
    })
    await dl.connect()
    const handled: string[] = []
    let failedOnce!: () => void
    const failed = new Promise<void>((r) => (failedOnce = r))
    dl.on(dl.events.RETRY, () => failedOnce())
    const handler = dl.eachMessage(async ({ message }) => {
      const value = message.value!.toString()
      if (value === 'poison') throw new Error('cannot handle it')
      handled.push(value)
    })
    const first = await t.consumer({ groupId })
    await first.subscribe({ topic, fromBeginning: true })
    await first.run({ eachMessage: handler })
    await failed
    // the member leaves while the poison message waits for its next attempt
    await Promise.all([first.disconnect(), dl.disconnect()])
    await dl.connect()
    let moved!: () => void
    const deadLettered = new Promise<void>((r) => (moved = r))
    dl.on(dl.events.DEAD_LETTER, () => moved())
    const second = await t.consumer({ groupId })
    await second.subscribe({ topic, fromBeginning: true })
    await second.run({ eachMessage: handler })
    await deadLettered
    await second.disconnect()
    const third = await t.consumer({ groupId })
    await third.subscribe({ topic, fromBeginning: true })
    let all!: () => void
    const done = new Promise<void>((r) => (all = r))
    await third.run({
      eachMessage: async ({ message }) => {
        const value = message.value!.toString()
        if (!handled.includes(value)) handled.push(value)
        if (['n0', 'n1', 'n2'].every((v) => handled.includes(v))) all()
      },
    })
    await done
    expect([...handled].sort()).toEqual(['n0', 'n1', 'n2'])
    await dl.disconnect()
  }, 40_000)
  it('poison messages of partitions consumed concurrently are each moved once, one transaction at a time', async () => {
    const partitions = 4
    const topic = await t.createTopic(partitions)
    const groupId = uniqueName('g')
    const producer = await t.producer()
    await producer.send({ topic, messages: Array.from({ length: partitions }, (_, partition) => ({ value: 'poison', partition })) })
    const dl = deadLetter(t.kafka as never, { groupId, topic: `${topic}.dlq`, maxAttempts: 1 })
    await dl.connect()
    const movedFrom = new Set<number>()
    let allMoved!: () => void
    const done = new Promise<void>((r) => (allMoved = r))
    dl.on(dl.events.DEAD_LETTER, (e) => {
      movedFrom.add(e.payload.partition)
      if (movedFrom.size === partitions) allMoved()
    })
    const crashes: unknown[] = []
    const consumer = await t.consumer({ groupId })
    consumer.on(consumer.events.CRASH, (e) => crashes.push(e.payload.error))
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      partitionsConsumedConcurrently: partitions,
      eachMessage: dl.eachMessage(async () => {
        throw new Error('cannot handle it')
      }),
    })
    // before: the second concurrent move failed with "There is already an ongoing transaction for this producer"
    await done
    expect(crashes).toEqual([])
    await dl.disconnect()
  }, 30_000)
})
