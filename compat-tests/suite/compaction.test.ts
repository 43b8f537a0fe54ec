// Issue #37: a compacted topic (cleanup.policy=compact), the same program on both backends. After compaction a
// reader from the beginning sees, for every key, the latest value and nothing older; a tombstone deletes its key;
// offsets only increase (holes allowed). Kafka's cleaner never touches the active segment, so the poll loop keeps
// sending a filler record (segment.ms is low: the next append rolls the segment) until the log is compacted.
import type { Admin, KafkaMessage } from 'kafkajs'
import { describe, expect } from 'vitest'
import { contract, maintenancePass, uniqueName, waitFor, type Scope } from '../harness.js'

const COMPACTED = [
  { name: 'cleanup.policy', value: 'compact' },
  { name: 'segment.ms', value: '100' },
  { name: 'min.cleanable.dirty.ratio', value: '0.01' },
  { name: 'delete.retention.ms', value: '100' },
  { name: 'min.compaction.lag.ms', value: '0' },
]

async function compactedTopic(t: Scope): Promise<string> {
  const topic = uniqueName('compacted')
  const admin = await t.admin()
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: COMPACTED }] })
  await waitFor(async () => (await admin.fetchTopicOffsets(topic).catch(() => [])).length === 1, { message: `${topic} ready` })
  return topic
}

/** Every record from the beginning to the high watermark, read by a fresh group that is deleted afterwards. */
async function readAll(t: Scope, admin: Admin, topic: string): Promise<KafkaMessage[]> {
  const [{ high }] = await admin.fetchTopicOffsets(topic)
  const groupId = uniqueName('reader')
  const consumer = await t.consumer({ groupId })
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen: KafkaMessage[] = []
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${seen.length} records of ${topic} up to ${high}`)), 30_000)
    const check = (offset: string) => {
      if (BigInt(offset) + 1n < BigInt(high)) return
      clearTimeout(timer)
      resolve()
    }
    void consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message)
        check(message.offset)
      },
    })
  })
  await consumer.disconnect()
  // a registered group holds pgqueue's compaction at its committed offset (docs/compaction.md): leave none behind
  await admin.deleteGroups([groupId])
  return seen
}

const DATA = /^k\d+$/

describe('compacted topics', () => {
  contract(
    'a reader from the beginning gets the latest value of every key; tombstones delete their key; offsets increase',
    async (t) => {
      const topic = await compactedTopic(t)
      const admin = await t.admin()
      const producer = await t.producer()
      const keys = Array.from({ length: 10 }, (_, i) => `k${i}`)
      for (let round = 0; round < 5; round++) {
        await producer.send({ topic, messages: keys.map((key) => ({ key, value: `r${round}-${key}` })) })
      }
      await producer.send({
        topic,
        messages: [
          { key: 'k0', value: null },
          { key: 'k1', value: null },
        ],
      })
      const expected = new Map(keys.slice(2).map((k) => [k, `r4-${k}`]))

      let filler = 0
      let last: KafkaMessage[] = []
      await waitFor(
        async () => {
          await producer.send({ topic, messages: [{ key: 'filler', value: String(filler++) }] })
          await maintenancePass()
          last = await readAll(t, admin, topic)
          const data = last.filter((m) => DATA.test(m.key!.toString()))
          // compacted, tombstones gone: one record per live key and none for k0 / k1
          return data.length === expected.size
        },
        { timeout: 120_000, interval: 500, message: `${topic} compacted` },
      )

      const offsets = last.map((m) => BigInt(m.offset))
      expect(offsets.every((o, i) => i === 0 || o > offsets[i - 1]!)).toBe(true)
      const state = new Map<string, string | null>()
      for (const m of last) {
        const key = m.key!.toString()
        if (!DATA.test(key)) continue
        if (m.value === null) state.delete(key)
        else state.set(key, m.value.toString())
      }
      expect(state).toEqual(expected)
      // the log keeps its end: the high watermark counts every record ever written, holes included
      const [{ high }] = await admin.fetchTopicOffsets(topic)
      expect(BigInt(high)).toBe(52n + BigInt(filler))
    },
    { timeout: 180_000 },
  )

  contract('a record without a key is refused on a compacted topic', async (t) => {
    const topic = await compactedTopic(t)
    const producer = await t.producer({ retry: { retries: 0 } })
    const err = (await producer.send({ topic, messages: [{ value: 'no key' }] }).catch((e: unknown) => e)) as Error & { type?: string }
    expect(err).toBeInstanceOf(Error)
    expect({ name: err.name, type: err.type }).toEqual({ name: 'KafkaJSProtocolError', type: 'INVALID_RECORD' })
    const [{ high }] = await (await t.admin()).fetchTopicOffsets(topic)
    expect(high).toBe('0')
  })
})
