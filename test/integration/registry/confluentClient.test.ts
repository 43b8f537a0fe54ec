// The real client, @kafkajs/confluent-schema-registry, against our server, end to end with the library's
// producer and consumer.
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry'
import { describe, expect, it } from 'vitest'
import { createAvroCodec } from '../../../src/registry/index.js'
import { deferred } from '../../helpers/db.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useRegistry } from './helpers.js'

const f = useRegistry('reg_client')

const order = (extra: object[] = []) =>
  JSON.stringify({
    type: 'record',
    name: 'Order',
    namespace: 'shop',
    fields: [
      { name: 'id', type: 'string' },
      { name: 'amount', type: 'double' },
      { name: 'tags', type: { type: 'array', items: 'string' } },
      ...extra,
    ],
  })

describe('@kafkajs/confluent-schema-registry against the pgQueue registry', () => {
  it('registers, looks up ids and round-trips Avro through a producer and consumer', async () => {
    const subject = uniqueName('orders-value')
    const topic = uniqueName('orders')
    const client = new SchemaRegistry({ host: f.url() })
    const { id } = await client.register({ type: SchemaType.AVRO, schema: order() }, { subject })
    expect(id).toBeGreaterThan(0)
    expect(await client.getLatestSchemaId(subject)).toBe(id)
    expect(await client.getRegistryId(subject, 1)).toBe(id)
    expect(await client.getRegistryIdBySchema(subject, { type: SchemaType.AVRO, schema: order() })).toBe(id)
    // the client set the subject's level after its first registration
    expect((await f.api('GET', `/config/${subject}`)).body).toEqual({ compatibilityLevel: 'BACKWARD' })

    const values = Array.from({ length: 25 }, (_, i) => ({ id: `o-${i}`, amount: i * 1.5, tags: i % 2 ? ['odd'] : [] }))
    const producer = await f.t.producer()
    const encoded = await Promise.all(values.map((v) => client.encode(id, v)))
    expect(encoded[0]![0]).toBe(0)
    expect(encoded[0]!.readInt32BE(1)).toBe(id)
    await producer.send({ topic, messages: encoded.map((value, i) => ({ key: values[i]!.id, value })) })

    // a fresh client (empty cache) fetches the schema by id to decode
    const reader = new SchemaRegistry({ host: f.url() })
    const codec = createAvroCodec(await f.server().handler.registry())
    const consumer = await f.t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const decoded: unknown[] = []
    const inProcess: unknown[] = []
    const done = deferred()
    await consumer.run({
      eachMessage: async ({ message }) => {
        decoded.push(await reader.decode(message.value!))
        inProcess.push((await codec.decode(message.value!)).value)
        if (decoded.length === values.length) done.resolve()
      },
    })
    await done.promise
    const byId = (xs: unknown[]) => [...xs].sort((a, b) => ((a as { id: string }).id < (b as { id: string }).id ? -1 : 1))
    expect(byId(decoded)).toEqual(byId(values))
    expect(byId(inProcess.map((v) => ({ ...(v as object) })))).toEqual(byId(values))
  })

  it('is refused an incompatible schema under BACKWARD (HTTP 409 as the client ResponseError)', async () => {
    const subject = uniqueName('strict-value')
    const client = new SchemaRegistry({ host: f.url() })
    await client.register({ type: SchemaType.AVRO, schema: order() }, { subject })
    const incompatible = order([{ name: 'currency', type: 'string' }]) // no default: cannot read old data
    const err = (await client.register({ type: SchemaType.AVRO, schema: incompatible }, { subject }).catch((e) => e)) as Error & {
      status?: number
    }
    expect(err).toBeInstanceOf(Error)
    // the client wraps HTTP failures in its ResponseError; it has no special class for a 409
    expect(err.name).toBe('ResponseError')
    expect(err.status).toBe(409)
    expect(err.message).toMatch(/incompatible with an earlier schema/)
    // a compatible evolution is accepted and becomes the latest id
    const evolved = await client.register(
      { type: SchemaType.AVRO, schema: order([{ name: 'currency', type: 'string', default: 'EUR' }]) },
      { subject },
    )
    expect(await client.getLatestSchemaId(subject)).toBe(evolved.id)
  })

  it('raises ConfluentSchemaRegistryCompatibilityError when the subject level differs from the requested one', async () => {
    const subject = uniqueName('levels-value')
    const client = new SchemaRegistry({ host: f.url() })
    await client.register({ type: SchemaType.AVRO, schema: order() }, { subject })
    const err = (await client
      .register({ type: SchemaType.AVRO, schema: order() }, { subject, compatibility: COMPATIBILITY.FULL })
      .catch((e) => e)) as Error
    expect(err.name).toBe('ConfluentSchemaRegistryCompatibilityError')
    expect(err.message).toMatch(/FULL != BACKWARD/)
  })

  it('encodes and decodes a schema with references', async () => {
    const client = new SchemaRegistry({ host: f.url() })
    const moneySubject = uniqueName('money')
    const money = JSON.stringify({ type: 'record', name: 'Money', namespace: 'fin', fields: [{ name: 'cents', type: 'long' }] })
    await client.register({ type: SchemaType.AVRO, schema: money }, { subject: moneySubject })
    const invoice = JSON.stringify({ type: 'record', name: 'Invoice', namespace: 'fin', fields: [{ name: 'total', type: 'fin.Money' }] })
    const { id } = await client.register(
      { type: SchemaType.AVRO, schema: invoice, references: [{ name: 'fin.Money', subject: moneySubject, version: 1 }] },
      { subject: uniqueName('invoice') },
    )
    const buf = await client.encode(id, { total: { cents: 1234 } })
    expect(await new SchemaRegistry({ host: f.url() }).decode(buf)).toEqual({ total: { cents: 1234 } })
  })
})
