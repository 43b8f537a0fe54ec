// Log compaction (docs/compaction.md) through the library's own producer, admin and consumer: the latest record
// of every key survives, tombstones delete their key after delete.retention.ms, offsets never change, the head and
// what the slowest registered group has not committed stay, and readers see increasing offsets across the holes.
import type { Admin, KafkaMessage } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KafkaJSProtocolError } from '../../../src/kafkajs/errors.js'
import type { CompletedMaintenance } from '../../../src/maintenance/run.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_compaction')
let admin: Admin
beforeAll(async () => {
  admin = m.kafka.admin()
  await admin.connect()
})
afterAll(() => admin.disconnect())

type Entry = { name: string; value: string }

/** rows one run compacted away in this topic (other tests' topics share the schema) */
const compacted = (report: CompletedMaintenance, topic: { name: string }) => report.compaction.byTopic[topic.name] ?? 0

async function compactedTopic(extra: Entry[] = [], partitions = 1): Promise<{ id: string; name: string }> {
  const name = uniqueName('compacted')
  const configEntries = [{ name: 'cleanup.policy', value: 'compact' }, { name: 'min.cleanable.dirty.ratio', value: '0.01' }, ...extra]
  await admin.createTopics({ topics: [{ topic: name, numPartitions: partitions, configEntries }] })
  const [row] = await m.sql<{ id: string }>(`SELECT id::text AS id FROM ${m.tables.topic} WHERE topic_name = $1`, [name])
  return { id: row!.id, name }
}

/** Kafka's (non-incremental) AlterConfigs of one topic: the entries given replace its whole configuration. */
const alter = (name: string, configEntries: Entry[]) => admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name, configEntries }] })

/** key -> offset of what is stored, with the value (null for a tombstone) */
async function stored(topicId: string, partition = 0) {
  return m.sql<{ offset: string; key: string; value: string | null }>(
    `SELECT (enqueue_seq - 1)::text AS offset, routing_key AS key,
            CASE WHEN kafka_flags & 1 <> 0 THEN NULL ELSE convert_from(payload, 'UTF8') END AS value
     FROM ${m.tables.message} WHERE topic_id = $1 AND partition_id = $2 ORDER BY enqueue_seq`,
    [topicId, partition],
  )
}

/** Sends rounds of `keys` keys (value `r<round>-<key>`) to partition 0, one send per round; returns every offset. */
async function produceRounds(topic: string, rounds: number, keys: number, priority?: (round: number) => number): Promise<Map<string, string>> {
  const producer = await m.producer()
  const latest = new Map<string, string>()
  for (let r = 0; r < rounds; r++) {
    const msgs = Array.from({ length: keys }, (_, k) => ({
      key: `k${k}`,
      value: `r${r}-k${k}`,
      partition: 0,
      ...(priority ? { priority: priority(r) } : {}),
    }))
    const [meta] = await producer.send({ topic, messages: msgs })
    msgs.forEach((msg, i) => latest.set(msg.key, (BigInt(meta!.baseOffset!) + BigInt(i)).toString()))
  }
  return latest
}

/** Everything a fresh group reads from the beginning up to the high watermark. */
async function readAll(topic: string): Promise<KafkaMessage[]> {
  const [{ high }] = await admin.fetchTopicOffsets(topic)
  const consumer = await m.consumer({ groupId: uniqueName('reader') })
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen: KafkaMessage[] = []
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${seen.length} messages, high ${high}`)), 30_000)
    void consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message)
        if (BigInt(message.offset) + 1n >= BigInt(high)) {
          clearTimeout(timer)
          resolve()
        }
      },
    })
  })
  await consumer.disconnect()
  return seen
}

describe('compaction', () => {
  it('keeps the latest record of every key at its original offset; readers see increasing offsets over the holes', async () => {
    const topic = await compactedTopic()
    const latest = await produceRounds(topic.name, 5, 20)
    const before = await admin.fetchTopicOffsets(topic.name)

    const report = await m.run({ batchDeleteLimit: 7 })

    expect(compacted(report, topic)).toBe(80)
    const rows = await stored(topic.id)
    expect(rows.map((r) => [r.key, r.offset])).toEqual([...latest.entries()])
    expect(rows.every((r) => r.value === `r4-${r.key}`)).toBe(true)
    // the log's ends do not move: holes are below the high watermark, the first offset stays where it was or moves up
    const after = await admin.fetchTopicOffsets(topic.name)
    expect(after[0]!.high).toBe(before[0]!.high)
    expect(BigInt(after[0]!.low)).toBeGreaterThanOrEqual(BigInt(before[0]!.low))

    const read = await readAll(topic.name)
    expect(read.map((x) => x.offset)).toEqual([...latest.values()])
    expect(read.map((x) => x.value?.toString())).toEqual([...latest.keys()].map((k) => `r4-${k}`))

    // a second run finds nothing more to do
    expect(compacted(await m.run(), topic)).toBe(0)
  })

  it('a tombstone deletes its key after delete.retention.ms, not before; the anchor stays', async () => {
    const topic = await compactedTopic()
    const producer = await m.producer()
    await producer.send({
      topic: topic.name,
      messages: [
        { key: 'a', value: '1', partition: 0 },
        { key: 'b', value: '1', partition: 0 },
      ],
    })
    await producer.send({
      topic: topic.name,
      messages: [
        { key: 'a', value: null, partition: 0 },
        { key: 'c', value: '1', partition: 0 },
      ],
    })

    await m.run()
    // default delete.retention.ms (1 day): the tombstone stays, the value it deletes goes
    expect((await stored(topic.id)).map((r) => [r.key, r.value])).toEqual([
      ['b', '1'],
      ['a', null],
      ['c', '1'],
    ])

    await alter(topic.name, [
      { name: 'cleanup.policy', value: 'compact' },
      { name: 'delete.retention.ms', value: '0' },
    ])
    const report = await m.run()
    expect(report.compaction.tombstones).toBe(1)
    expect((await stored(topic.id)).map((r) => [r.key, r.value])).toEqual([
      ['b', '1'],
      ['c', '1'],
    ])

    // a tombstone that is the partition's last row is its anchor (DataHub's MAX(seq)+1 continues from it): kept
    await producer.send({ topic: topic.name, messages: [{ key: 'c', value: null, partition: 0 }] })
    await m.run()
    expect((await stored(topic.id)).map((r) => [r.key, r.value])).toEqual([
      ['b', '1'],
      ['c', null],
    ])
    const [{ offset: next }] = await producer
      .send({ topic: topic.name, messages: [{ key: 'd', value: '1', partition: 0 }] })
      .then((r) => [{ offset: r[0]!.baseOffset! }])
    expect(next).toBe('5')
  })

  it('never touches the head (younger than min.compaction.lag.ms)', async () => {
    const topic = await compactedTopic([{ name: 'min.compaction.lag.ms', value: '3600000' }])
    await produceRounds(topic.name, 3, 5)
    expect(compacted(await m.run(), topic)).toBe(0)
    expect(await stored(topic.id)).toHaveLength(15)
  })

  it('keeps what the slowest registered group has not committed, so no group meets a hole', async () => {
    const topic = await compactedTopic()
    await produceRounds(topic.name, 4, 5) // seqs 1..20
    await m.sql(`INSERT INTO ${m.tables.consumerRegistration} (consumer_group, topic_id) VALUES ('slow', $1), ('fast', $1)`, [topic.id])
    await m.sql(
      `INSERT INTO ${m.tables.consumerOffset} (consumer_group, topic_id, partition_id, offset_value) VALUES ('slow', $1, 0, 10), ('fast', $1, 0, 20)`,
      [topic.id],
    )
    await m.run()
    // seqs 1..10 (rounds 0 and 1) compact against the key map; nothing above the slow group's offset goes
    const rows = await stored(topic.id)
    expect(rows.filter((r) => Number(r.offset) < 10)).toEqual([])
    expect(rows.filter((r) => Number(r.offset) >= 10)).toHaveLength(10)
    const { groups } = await admin.describeGroups(['slow'])
    expect(groups).toHaveLength(1)
    // lag counts no hole: everything above the slowest offset is still there
    const lag = await admin.fetchOffsets({ groupId: 'slow', topics: [topic.name] })
    expect(lag[0]!.partitions[0]!.offset).toBe('10')

    // once the group has committed everything, the rest compacts down to the latest per key
    await m.sql(`UPDATE ${m.tables.consumerOffset} SET offset_value = 20 WHERE topic_id = $1`, [topic.id])
    await m.run()
    expect((await stored(topic.id)).map((r) => r.offset)).toEqual(['15', '16', '17', '18', '19'])
  })

  it('keeps the latest by offset across priorities', async () => {
    const topic = await compactedTopic()
    // later rounds at a higher-priority band: consumed first, yet the latest offset is what stays
    const latest = await produceRounds(topic.name, 3, 4, (r) => [5, 0, 9][r]!)
    await m.run({ batchDeleteLimit: 3 })
    const rows = await stored(topic.id)
    expect(rows.map((r) => [r.key, r.offset])).toEqual([...latest.entries()])
    expect(rows.every((r) => r.value!.startsWith('r2-'))).toBe(true)
  })

  it('waits for min.cleanable.dirty.ratio, and max.compaction.lag.ms overrides it', async () => {
    const topic = await compactedTopic([{ name: 'min.cleanable.dirty.ratio', value: '0.9' }])
    await produceRounds(topic.name, 4, 10)
    expect(compacted(await m.run(), topic)).toBe(30) // all dirty: ratio 1
    await produceRounds(topic.name, 1, 2) // 2 dirty of 12
    expect(compacted(await m.run(), topic)).toBe(0)
    await alter(topic.name, [
      { name: 'cleanup.policy', value: 'compact' },
      { name: 'min.cleanable.dirty.ratio', value: '0.9' },
      { name: 'max.compaction.lag.ms', value: '1' },
    ])
    expect(compacted(await m.run(), topic)).toBe(2)
  })

  it('transactions and the outbox: aborted records were never stored, committed ones follow the key rule', async () => {
    const topic = await compactedTopic()
    const tx = await m.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 })
    const send = async (value: string, commit: boolean) => {
      const t = await tx.transaction()
      await t.send({ topic: topic.name, messages: [{ key: 'a', value, partition: 0 }] })
      await (commit ? t.commit() : t.abort())
    }
    await send('1', true)
    await send('2', false)
    await send('3', true)
    // the outbox: the record commits with the caller's own transaction
    const plain = await m.producer()
    const client = await m.db.pool.connect()
    try {
      await client.query('BEGIN')
      await plain.sendWith(client, { topic: topic.name, messages: [{ key: 'b', value: 'outbox', partition: 0 }] })
      await client.query('COMMIT')
    } finally {
      client.release()
    }
    await plain.send({ topic: topic.name, messages: [{ key: 'b', value: 'later', partition: 0 }] })
    await m.run()
    expect((await stored(topic.id)).map((r) => [r.key, r.value])).toEqual([
      ['a', '3'],
      ['b', 'later'],
    ])
  })

  it('the pg_cron procedure compacts with the same functions', async () => {
    const topic = await compactedTopic([], 2)
    const producer = await m.producer()
    for (let r = 0; r < 3; r++) {
      await producer.send({
        topic: topic.name,
        messages: ['x', 'y', 'z'].flatMap((k) => [0, 1].map((p) => ({ key: k, value: `${r}`, partition: p }))),
      })
    }
    await m.sql(`CALL ${m.fn('run_maintenance')}()`)
    for (const p of [0, 1])
      expect((await stored(topic.id, p)).map((r) => [r.key, r.value])).toEqual([
        ['x', '2'],
        ['y', '2'],
        ['z', '2'],
      ])
  })
})

describe('reading over holes', () => {
  it('seek into a hole delivers the next stored record; resetOffsets and fetchTopicOffsets name stored offsets', async () => {
    const topic = await compactedTopic()
    await produceRounds(topic.name, 3, 3) // offsets 0..8
    const producer = await m.producer()
    await producer.send({ topic: topic.name, messages: [{ key: 'k0', value: 'last', partition: 0 }] }) // offset 9
    await m.run()
    expect((await stored(topic.id)).map((r) => r.offset)).toEqual(['7', '8', '9'])
    // the high watermark never moves; the low one is the first stored record (Kafka keeps its log start offset)
    expect(await admin.fetchTopicOffsets(topic.name)).toEqual([{ partition: 0, offset: '10', high: '10', low: '7' }])

    const groupId = uniqueName('seeker')
    const consumer = await m.consumer({ groupId })
    await consumer.subscribe({ topic: topic.name, fromBeginning: true })
    const offsets: string[] = []
    let seeked = false
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          offsets.push(message.offset)
          if (!seeked) {
            seeked = true
            consumer.seek({ topic: topic.name, partition: 0, offset: '3' }) // inside the hole 0..6
          } else if (message.offset === '9') resolve()
        },
      })
    })
    await done
    // 7 first (from the beginning), then after the seek to 3 the next stored record: 7 again, 8, 9
    expect(offsets.slice(0, 1)).toEqual(['7'])
    expect(offsets.slice(-3)).toEqual(['7', '8', '9'])
    await consumer.disconnect()

    // resetOffsets to earliest (KafkaJS commits the -2 marker: the next consumer's fromBeginning resolves it) starts
    // the group's next consumer at the first stored record
    await admin.resetOffsets({ groupId, topic: topic.name, earliest: true })
    const again = await m.consumer({ groupId })
    await again.subscribe({ topic: topic.name, fromBeginning: true })
    const first = await new Promise<string>((resolve) => {
      void again.run({ eachMessage: async ({ message }) => resolve(message.offset) })
    })
    expect(first).toBe('7')
  })
})

describe('producing to a compacted topic', () => {
  it('refuses a keyless record with INVALID_RECORD and writes nothing of the send', async () => {
    const topic = await compactedTopic()
    const producer = await m.producer()
    const err = await producer.send({ topic: topic.name, messages: [{ key: 'k', value: 'v' }, { value: 'no key' }] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSProtocolError)
    expect(err).toMatchObject({ type: 'INVALID_RECORD', code: 87, retriable: false })
    expect(await stored(topic.id)).toEqual([])
    // a tombstone has a key: accepted
    await producer.send({ topic: topic.name, messages: [{ key: 'k', value: null }] })
  })
})

describe('compaction configs', () => {
  it('accepts compact and compact,delete, refuses bad values with INVALID_CONFIG', async () => {
    const name = uniqueName('cfg')
    await admin.createTopics({
      topics: [
        {
          topic: name,
          configEntries: [
            { name: 'cleanup.policy', value: 'compact,delete' },
            { name: 'retention.ms', value: '60000' },
            { name: 'segment.ms', value: '100' },
            { name: 'delete.retention.ms', value: '100' },
            { name: 'min.compaction.lag.ms', value: '0' },
            { name: 'max.compaction.lag.ms', value: '1000' },
            { name: 'min.cleanable.dirty.ratio', value: '0.01' },
          ],
        },
      ],
    })
    const [row] = await m.sql<{ seconds: number }>(`SELECT retention_max_age_seconds AS seconds FROM ${m.tables.topic} WHERE topic_name = $1`, [name])
    expect(row!.seconds).toBe(60) // compact,delete: retention still applies
    const { resources } = await admin.describeConfigs({ resources: [{ type: 2, name }], includeSynonyms: false })
    const values = Object.fromEntries(resources[0]!.configEntries.map((e) => [e.configName, e.configValue]))
    expect(values).toMatchObject({ 'cleanup.policy': 'compact,delete', 'min.cleanable.dirty.ratio': '0.01', 'segment.ms': '100' })

    for (const [entry, value] of [
      ['cleanup.policy', 'compacted'],
      ['min.cleanable.dirty.ratio', '1.5'],
      ['delete.retention.ms', '-5'],
      ['max.compaction.lag.ms', '0'],
    ] as const) {
      const err = await admin
        .createTopics({ topics: [{ topic: uniqueName('bad'), configEntries: [{ name: entry, value }] }] })
        .catch((e: { errors?: unknown[] }) => e.errors?.[0])
      expect(err, `${entry}=${value}`).toMatchObject({ type: 'INVALID_CONFIG' })
    }
  })

  it('compact without delete keeps rows forever: no age or byte retention', async () => {
    const topic = await compactedTopic([{ name: 'retention.ms', value: '1000' }])
    const [row] = await m.sql<{ seconds: number; bytes: string }>(
      `SELECT retention_max_age_seconds AS seconds, max_total_payload_bytes::text AS bytes FROM ${m.tables.topic} WHERE id = $1`,
      [topic.id],
    )
    expect(row).toEqual({ seconds: 0, bytes: '0' })
  })
})
