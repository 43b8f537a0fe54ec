// payload_compression per row: rows with different codes in one partition decode, an unknown code is delivered
// raw with an explanatory header (and the consumer keeps going), and send's Snappy argument stores SNAPPY.
import snappy from 'snappyjs'
import type { KafkaMessage } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { DECODE_ERROR_HEADER } from '../../../src/consumer/batch.js'
import { CompressionTypes } from '../../../src/kafkajs/exports.js'
import { deferred } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { tablesFor } from '../../../src/db/tables.js'

const t = useTestKafka('reg_codecs')
const tables = () => tablesFor(t.db.schema, 'metadata_queue')

async function topicId(topic: string): Promise<string> {
  const res = await t.db.pool.query(`SELECT id::text FROM ${tables().topic} WHERE topic_name = $1`, [topic])
  return res.rows[0].id
}

/** A row written straight into the table, taking its seq from the ledger as any writer must. */
async function insertRow(topic: string, key: string, payload: Buffer, code: number): Promise<void> {
  const t2 = tables()
  await t.db.pool.query(
    `WITH seq AS (
       UPDATE ${t2.partitionSeq} SET next_seq = next_seq + 1 WHERE topic_id = $1 AND partition_id = 0 RETURNING next_seq - 1 AS s
     )
     INSERT INTO ${t2.message} (topic_id, partition_id, routing_key, enqueue_seq, payload, payload_compression)
     SELECT $1, 0, $2, seq.s, $3, $4 FROM seq`,
    [await topicId(topic), key, payload, code],
  )
}

describe('payload codecs', () => {
  it('decodes NONE and SNAPPY rows of one partition, and hands an unknown code over raw without stopping', async () => {
    const topic = uniqueName('codecs')
    const admin = t.kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
    const text = 'snappy row '.repeat(20)
    const garbage = Buffer.from([0xde, 0xad, 0xbe, 0xef])
    await insertRow(topic, 'a', Buffer.from('plain row'), 0)
    await insertRow(topic, 'b', Buffer.from(snappy.compress(Buffer.from(text))), 1)
    await insertRow(topic, 'c', garbage, 7)
    await insertRow(topic, 'd', Buffer.from('after the bad row'), 0)
    await insertRow(topic, 'e', garbage, 1) // claims SNAPPY, is not

    const groupId = uniqueName('codec-group')
    const consumer = await t.consumer({ groupId })
    let crashes = 0
    consumer.on(consumer.events.CRASH, () => crashes++)
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: KafkaMessage[] = []
    const done = deferred()
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message)
        if (seen.length === 5) done.resolve()
      },
    })
    await done.promise
    expect(seen.map((m) => m.offset)).toEqual(['0', '1', '2', '3', '4'])
    expect(seen[0]!.value!.toString()).toBe('plain row')
    expect(seen[1]!.value!.toString()).toBe(text)
    expect(seen[2]!.value).toEqual(garbage)
    expect(seen[2]!.headers![DECODE_ERROR_HEADER]!.toString()).toBe(
      `Unknown payload_compression 7 for topic "${topic}" partition 0 offset 2; known codes are 0 (NONE) and 1 (SNAPPY)`,
    )
    expect(seen[3]!.value!.toString()).toBe('after the bad row')
    expect(seen[3]!.headers![DECODE_ERROR_HEADER]).toBeUndefined()
    expect(seen[4]!.value).toEqual(garbage)
    expect(seen[4]!.headers![DECODE_ERROR_HEADER]!.toString()).toMatch(/Invalid Snappy bitstream/)

    // the group moves past the bad row: no crash, no redelivery
    const committed = async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions[0]!.offset
    const deadline = Date.now() + 5000
    while ((await committed()) !== '5' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(await committed()).toBe('5')
    await new Promise((r) => setTimeout(r, 300))
    expect(seen).toHaveLength(5)
    expect(crashes).toBe(0)
    await admin.disconnect()
  })

  it("maps send's CompressionTypes.Snappy onto SNAPPY rows (payload_compression 1)", async () => {
    const kafka = t.newKafka({ payloadCompression: 'NONE' }) // the argument, not the default, must decide
    const producer = kafka.producer()
    await producer.connect()
    try {
      const topic = uniqueName('snappy-arg')
      const value = JSON.stringify({ repeated: 'abcdefgh'.repeat(64) })
      await producer.send({ topic, compression: CompressionTypes.Snappy, messages: [{ key: 'k', value }] })
      await producer.send({ topic, compression: CompressionTypes.None, messages: [{ key: 'k', value }] })
      await producer.send({ topic, compression: CompressionTypes.Snappy, messages: [{ key: 'k', value: 'tiny' }] })
      const rows = await t.db.pool.query(
        `SELECT payload_compression AS code, octet_length(payload) AS bytes FROM ${tables().message}
         WHERE topic_id = $1 ORDER BY enqueue_seq`,
        [await topicId(topic)],
      )
      expect(rows.rows[0]).toMatchObject({ code: 1 })
      expect(Number(rows.rows[0].bytes)).toBeLessThan(Buffer.byteLength(value) / 4)
      expect(rows.rows[1]).toMatchObject({ code: 0, bytes: Buffer.byteLength(value) })
      expect(rows.rows[2]).toMatchObject({ code: 0 }) // not worth compressing: kept plain

      const consumer = await t.consumer()
      await consumer.subscribe({ topic, fromBeginning: true })
      const values: string[] = []
      const done = deferred()
      await consumer.run({
        eachMessage: async ({ message }) => {
          values.push(message.value!.toString())
          if (values.length === 3) done.resolve()
        },
      })
      await done.promise
      expect(values).toEqual([value, value, 'tiny'])
    } finally {
      await producer.disconnect()
    }
  })
})
