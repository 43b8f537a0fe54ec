// A previous owner's transaction that stalls between sendOffsets and COMMIT (SIGSTOP, a hung event loop) holds
// the row of the partition's committed offset. The next owner must not hang on it: its other partitions start at
// once, and the stalled transaction ends after the producer's transactionTimeout, as Kafka's coordinator aborts it.
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('stalled_txn')

/** Resolves when `check` holds for a delivered message; rejects after `ms` (a hang bound, not a timing check). */
function deliveredWithin<T>(ms: number, what: string): { seen: (v: T) => void; until: (check: (v: T) => boolean) => Promise<T> } {
  const waiters: Array<{ check: (v: T) => boolean; done: (v: T) => void }> = []
  const seenValues: T[] = []
  return {
    seen: (v) => {
      seenValues.push(v)
      for (const w of waiters.splice(0)) w.check(v) ? w.done(v) : waiters.push(w)
    },
    until: (check) =>
      new Promise<T>((resolve, reject) => {
        const found = seenValues.find(check)
        if (found !== undefined) return resolve(found)
        const timer = setTimeout(() => reject(new Error(`not delivered within ${ms} ms: ${what}`)), ms)
        waiters.push({ check, done: (v) => (clearTimeout(timer), resolve(v)) })
      }),
  }
}

describe("a stalled transaction holding a partition's offsets", () => {
  it("does not hold up the new owner's other partitions; that one starts once the transaction ends", async () => {
    const topic = await t.createTopic(2)
    const groupId = uniqueName('g')
    const admin = t.kafka.admin()
    await admin.connect()
    await admin.setOffsets({
      groupId,
      topic,
      partitions: [
        { partition: 0, offset: '0' },
        { partition: 1, offset: '0' },
      ],
    })
    await admin.disconnect()
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [
        { value: 'p0', partition: 0 },
        { value: 'p1', partition: 1 },
      ],
    })

    // the stalled transaction: it wrote partition 0's offset row and never ends
    const stalled = await t.db.pool.connect()
    await stalled.query('BEGIN')
    await stalled.query(
      `UPDATE "${t.db.schema}".metadata_queue_consumer_offset SET offset_value = offset_value WHERE consumer_group = $1 AND partition_id = 0`,
      [groupId],
    )
    try {
      const consumer = await t.consumer({ groupId })
      await consumer.subscribe({ topic })
      const delivered = deliveredWithin<{ partition: number; value: string }>(15_000, 'partition messages')
      const values: string[] = []
      await consumer.run({
        eachMessage: async ({ partition, message }) => {
          values.push(message.value!.toString())
          delivered.seen({ partition, value: message.value!.toString() })
        },
      })
      // before: the member's claim of both partitions waited on the row lock, and nothing was consumed at all
      await delivered.until((d) => d.partition === 1)
      expect(values).toEqual(['p1'])
      await stalled.query('ROLLBACK')
      await delivered.until((d) => d.partition === 0)
      expect(values.sort()).toEqual(['p0', 'p1'])
    } finally {
      await stalled.query('ROLLBACK').catch(() => undefined)
      stalled.release()
    }
  }, 30_000)

  it('a transaction left open past transactionTimeout is rolled back: the next owner starts at the offset before it', async () => {
    const topic = await t.createTopic(1)
    const groupId = uniqueName('g')
    const producer = await t.producer()
    await producer.send({ topic, messages: ['m0', 'm1'].map((value) => ({ value, partition: 0 })) })
    const copier = await t.producer({ transactionalId: uniqueName('copier'), idempotent: true, maxInFlightRequests: 1, transactionTimeout: 1500 })
    const tx = await copier.transaction()
    await tx.send({ topic, messages: [{ value: 'copy-of-m0', partition: 0 }] })
    await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '1' }] }] })
    // ... and the producer stalls here, never committing

    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    const delivered = deliveredWithin<string>(20_000, 'm0 after the stalled transaction timed out')
    await consumer.run({ eachMessage: async ({ message }) => delivered.seen(message.value!.toString()) })
    // before: the transaction stayed open for as long as its producer stalled, and m0 never came
    await delivered.until((v) => v === 'm0')
    await expect(tx.commit()).rejects.toThrow()
    await delivered.until((v) => v === 'm1')
  }, 40_000)
})
