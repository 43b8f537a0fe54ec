// Interop with DataHub's Java producer: a row inserted the way PgQueueEventProducer + the Java store write it
// (section 2 of the reference: advisory lock, MAX(seq)+1, Confluent wire format, Snappy, content type
// application/vnd.confluent.avro+binary) is consumed by this library and decoded with the registry; and a row our
// producer writes reads back with DataHub's decoding rules.
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import avro from 'avsc'
import type { KafkaMessage } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  DATAHUB_AVRO_CONTENT_TYPE,
  dataHubLockKey,
  dataHubPartition,
  dataHubSubject,
  decodeDataHubRow,
  encodeDataHubRow,
  seedDataHubTopics,
} from '../../../src/datahub/index.js'
import { tablesFor } from '../../../src/db/tables.js'
import { createAvroCodec, startSchemaRegistry, type StartedSchemaRegistry } from '../../../src/registry/index.js'
import { deferred } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('datahub_java')
const tables = () => tablesFor(t.db.schema, 'metadata_queue')
const TOPIC = 'MetadataChangeLog_Versioned_v1'
const MCL = {
  type: 'record',
  name: 'MetadataChangeLog',
  namespace: 'com.linkedin.pegasus2avro.mxe',
  fields: [
    { name: 'entityUrn', type: ['null', 'string'], default: null },
    { name: 'changeType', type: { type: 'enum', name: 'ChangeType', symbols: ['UPSERT', 'DELETE'] } },
    { name: 'aspectName', type: 'string' },
    { name: 'created', type: { type: 'long', logicalType: 'timestamp-millis' } },
  ],
}
let server: StartedSchemaRegistry
let schemaId: number

beforeAll(async () => {
  server = await startSchemaRegistry({ kafka: t.kafka, basePath: '/schema-registry/api' })
  await seedDataHubTopics(t.kafka, { partitions: 8 })
  schemaId = (await (await server.handler.registry()).register(dataHubSubject(TOPIC), { schema: JSON.stringify(MCL) })).id
})

afterAll(async () => {
  await server?.close()
})

/** PgQueueEventProducer + EbeanPostgresMetadataQueueStore.enqueue, as SQL. */
async function insertLikeDataHubJava(routingKey: string, avroBody: Buffer, headers: Array<[string, string]>) {
  const tt = tables()
  const row = encodeDataHubRow({ routingKey, schemaId, avro: avroBody, headers })
  const client = await t.db.pool.connect()
  try {
    await client.query('BEGIN')
    const topic = (await client.query(`SELECT id, partition_count FROM ${tt.topic} WHERE topic_name = $1`, [TOPIC])).rows[0]
    const partition = dataHubPartition(routingKey, topic.partition_count)
    // content type: SELECT, INSERT ... ON CONFLICT DO NOTHING, SELECT
    await client.query(`INSERT INTO ${tt.contentType} (mime) VALUES ($1) ON CONFLICT (mime) DO NOTHING`, [row.contentType])
    const ct = (await client.query(`SELECT id FROM ${tt.contentType} WHERE mime = $1`, [row.contentType])).rows[0].id
    await client.query('SELECT pg_advisory_xact_lock($1)', [dataHubLockKey(topic.id, partition).toString()])
    const inserted = await client.query(
      `WITH mx AS (SELECT COALESCE(MAX(enqueue_seq), 0) AS max_seq FROM ${tt.message} WHERE topic_id = $1 AND partition_id = $2)
       INSERT INTO ${tt.message} (topic_id, partition_id, routing_key, enqueue_seq, priority, payload, content_type_id,
                                  payload_compression, headers)
       SELECT $1, $2, $3, mx.max_seq + 1, $4, $5, $6, $7, CAST($8 AS jsonb) FROM mx
       RETURNING enqueue_seq`,
      [topic.id, partition, routingKey, row.priority, row.payload, ct, row.payloadCompression, row.headers],
    )
    await client.query('COMMIT')
    return { partition, seq: Number(inserted.rows[0].enqueue_seq) }
  } catch (err) {
    await client.query('ROLLBACK')
    throw err
  } finally {
    client.release()
  }
}

describe('DataHub Java rows', () => {
  it('are consumed by this library and decode with the registry', async () => {
    const urn = 'urn:li:corpuser:datahub'
    const event = { entityUrn: urn, changeType: 'UPSERT', aspectName: 'corpUserInfo', created: 1_700_000_000_000 }
    const type = avro.Type.forSchema(MCL as avro.Schema)
    const { partition, seq } = await insertLikeDataHubJava(urn, type.toBuffer(event), [['traceparent', '00-abc']])
    expect(partition).toBe(7) // section 12: p(8) = 7
    expect(seq).toBe(1)
    const stored = await t.db.pool.query(
      `SELECT m.payload_compression, c.mime FROM ${tables().message} m JOIN ${tables().contentType} c ON c.id = m.content_type_id
       WHERE m.routing_key = $1`,
      [urn],
    )
    expect(stored.rows[0]).toEqual({ payload_compression: 1, mime: DATAHUB_AVRO_CONTENT_TYPE })

    const consumer = await t.consumer({ groupId: uniqueName('mcl-group') })
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
    const got = deferred<{ partition: number; message: KafkaMessage }>()
    await consumer.run({ eachMessage: async ({ partition: p, message }) => got.resolve({ partition: p, message }) })
    const { partition: p, message } = await got.promise
    expect(p).toBe(7)
    expect(message.offset).toBe('0')
    expect(message.key!.toString()).toBe(urn)
    expect(message.headers!.traceparent).toEqual(Buffer.from('00-abc'))
    expect(message.value![0]).toBe(0)
    expect(message.value!.readInt32BE(1)).toBe(schemaId)
    // decoded by the Confluent client through our HTTP registry, and in-process
    expect(await new SchemaRegistry({ host: server.url }).decode(message.value!)).toEqual(event)
    const codec = createAvroCodec(await server.handler.registry())
    expect(await codec.decode(message.value!)).toMatchObject({ schemaId, value: event })
  })

  it("are what DataHub reads back from this library's producer", async () => {
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:kafka,PageViewEvent,PROD)'
    const event = { entityUrn: urn, changeType: 'DELETE', aspectName: 'status', created: 1 }
    const codec = createAvroCodec(await server.handler.registry())
    const value = await codec.encode(schemaId, event)
    const producer = await t.producer()
    const [meta] = await producer.send({ topic: TOPIC, messages: [{ key: urn, value, headers: { traceparent: '00-def' } }] })
    expect(meta!.partition).toBe(dataHubPartition(urn, 8)) // 4: the same CRC-32 rule
    const row = (
      await t.db.pool.query(`SELECT routing_key, priority, payload, payload_compression, headers FROM ${tables().message} WHERE routing_key = $1`, [
        urn,
      ])
    ).rows[0]
    const decoded = decodeDataHubRow({
      payload: row.payload,
      payloadCompression: row.payload_compression,
      headers: row.headers,
      routingKey: row.routing_key,
      priority: row.priority,
    })
    expect(decoded).toMatchObject({ routingKey: urn, priority: 5, schemaId })
    expect(decoded.headers).toEqual([['traceparent', Buffer.from('00-def')]])
    expect(avro.Type.forSchema(MCL as avro.Schema).fromBuffer(decoded.avro)).toEqual(event)
  })
})
