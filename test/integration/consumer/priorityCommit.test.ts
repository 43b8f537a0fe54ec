// Explicit commits with priorities (issue #13 item 2): a commit of "offset + 1" for an urgent message read before
// older, less urgent ones must not store an offset past those (they were never handed to the handler).
import type { KafkaMessage } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('priority_commit')

async function storedOffset(group: string): Promise<string | undefined> {
  const { rows } = await t.db.pool.query<{ offset_value: string }>(
    `SELECT offset_value::text FROM "${t.db.schema}".metadata_queue_consumer_offset WHERE consumer_group = $1`,
    [group],
  )
  return rows[0]?.offset_value
}

const normal = Array.from({ length: 5 }, (_, i) => ({ value: `n${i}`, partition: 0, priority: 5 }))

/** The next member of the group gets every normal message the first never handled, and not the urgent one again. */
async function expectNextMemberGetsTheRest(topic: string, group: string, stored: string | undefined, how: string) {
  const next = await t.consumer({ groupId: group })
  await next.subscribe({ topic, fromBeginning: true })
  const redelivered: string[] = []
  let all!: () => void
  const got = new Promise<void>((r) => (all = r))
  await next.run({
    eachMessage: async ({ message }) => {
      redelivered.push(message.value!.toString())
      if (normal.every((n) => redelivered.includes(n.value))) all()
    },
  })
  await got
  console.log(`stored offset after ${how}: ${stored}; next member got ${redelivered.join(',')}`)
  expect(BigInt(stored ?? '0')).toBeLessThanOrEqual(0n)
  expect(redelivered.slice(0, 5)).toEqual(normal.map((n) => n.value))
  expect(redelivered).not.toContain('urgent')
}

/** Five normal messages and an urgent one behind them, a group, and a consume-transform-produce copy of one message. */
async function urgentBehindNormal() {
  const topic = await t.createTopic(1)
  const out = await t.createTopic(1)
  const group = uniqueName('g')
  const producer = await t.producer()
  await producer.send({ topic, messages: [...normal, { value: 'urgent', partition: 0, priority: 0 }] as never[] })
  const copier = await t.producer({ transactionalId: uniqueName('copier'), idempotent: true, maxInFlightRequests: 1 })
  const copy = async (partition: number, message: KafkaMessage) => {
    const tx = await copier.transaction()
    await tx.send({ topic: out, messages: [{ value: message.value }] })
    await tx.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [{ partition, offset: String(Number(message.offset) + 1) }] }] })
    await tx.commit()
  }
  return { topic, group, copy }
}

describe('explicit commits with priorities', () => {
  it('commitOffsets(offset + 1) of an urgent message stores no offset past the older messages not handled yet', async () => {
    const topic = await t.createTopic(1)
    const group = uniqueName('g')
    const producer = await t.producer()
    await producer.send({ topic, messages: [...normal, { value: 'urgent', partition: 0, priority: 0 }] as never[] })

    const first = await t.consumer({ groupId: group })
    await first.subscribe({ topic, fromBeginning: true })
    const seen: string[] = []
    let committed!: () => void
    const done = new Promise<void>((r) => (committed = r))
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    await first.run({
      autoCommit: false,
      eachMessage: async ({ message, partition }) => {
        seen.push(message.value!.toString())
        if (seen.length > 1) return
        await first.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }])
        committed()
        // the process "dies" here: nothing else is handled or committed
        await released
      },
    })
    await done
    expect(seen).toEqual(['urgent'])
    const stored = await storedOffset(group)
    const stopping = first.stop()
    release()
    await stopping

    await expectNextMemberGetsTheRest(topic, group, stored, 'the explicit commit')
  }, 30_000)

  it('transaction.sendOffsets(offset + 1) of an urgent message (consume-transform-produce) stores no offset past the older ones', async () => {
    const { topic, group, copy } = await urgentBehindNormal()

    const first = await t.consumer({ groupId: group })
    await first.subscribe({ topic, fromBeginning: true })
    const seen: string[] = []
    let copied!: () => void
    const done = new Promise<void>((r) => (copied = r))
    await first.run({
      autoCommit: false,
      eachMessage: async ({ message, partition }) => {
        seen.push(message.value!.toString())
        if (seen.length > 1) return
        await copy(partition, message)
        copied()
      },
    })
    await done
    await first.disconnect()
    expect(seen[0]).toBe('urgent')
    const stored = await storedOffset(group)

    // before: the transaction stored 6 and the next member got nothing (offsets 0-4 lost)
    await expectNextMemberGetsTheRest(topic, group, stored, 'sendOffsets')
  }, 30_000)
  it('a batch in band order committed with sendOffsets(lastOffset() + 1) is not copied again by the next member', async () => {
    const topic = await t.createTopic(1)
    const out = await t.createTopic(1)
    const group = uniqueName('g')
    const producer = await t.producer()
    // offsets 0-4 normal, 5-9 urgent: one batch, urgent first, so lastOffset() is the normal offset 4
    const urgent = Array.from({ length: 5 }, (_, i) => ({ value: `u${i}`, partition: 0, priority: 0 }))
    await producer.send({ topic, messages: [...normal, ...urgent] as never[] })
    const copier = await t.producer({ transactionalId: uniqueName('copier'), idempotent: true, maxInFlightRequests: 1 })

    const first = await t.consumer({ groupId: group })
    await first.subscribe({ topic, fromBeginning: true })
    const copiedValues: string[] = []
    let copied!: () => void
    const done = new Promise<void>((r) => (copied = r))
    await first.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const tx = await copier.transaction()
        await tx.send({ topic: out, messages: batch.messages.map((m) => ({ value: m.value })) })
        const next = String(Number(batch.lastOffset()) + 1)
        await tx.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [{ partition: batch.partition, offset: next }] }] })
        await tx.commit()
        copiedValues.push(...batch.messages.map((m) => m.value!.toString()))
        if (copiedValues.length === 10) copied()
      },
    })
    await done
    await first.disconnect()

    const next = await t.consumer({ groupId: group })
    await next.subscribe({ topic, fromBeginning: true })
    const again: string[] = []
    let tail!: () => void
    const gotTail = new Promise<void>((r) => (tail = r))
    await next.run({
      eachMessage: async ({ message }) => {
        again.push(message.value!.toString())
        if (message.value!.toString() === 'tail') tail()
      },
    })
    await producer.send({ topic, messages: [{ value: 'tail', partition: 0 }] })
    await gotTail
    // before: the stored positions stopped at offset 4 for every priority, and u0..u4 were copied a second time
    expect(again).toEqual(['tail'])
  }, 30_000)
  it('a sendOffsets made while stop() waits for the handler is still fenced and translated per priority', async () => {
    const { topic, group, copy } = await urgentBehindNormal()

    const first = await t.consumer({ groupId: group })
    await first.subscribe({ topic, fromBeginning: true })
    let inHandler!: () => void
    const entered = new Promise<void>((r) => (inHandler = r))
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    await first.run({
      autoCommit: false,
      eachMessage: async ({ message, partition }) => {
        if (message.value!.toString() !== 'urgent') return
        inHandler()
        await released
        await copy(partition, message)
      },
    })
    await entered
    // the consumer is being stopped while its handler is still at work (a restart, a rebalance's stop)
    const stopping = first.stop()
    release()
    await stopping
    const stored = await storedOffset(group)

    // before: the member was unregistered first, the offset (6) was stored as given, and 0-4 were lost
    await expectNextMemberGetsTheRest(topic, group, stored, 'sendOffsets during stop()')
  }, 30_000)
})
