// Throughput of encode + produce + consume + decode, Avro (Confluent wire format via
// @kafkajs/confluent-schema-registry against the pgQueue registry) versus raw bytes.
//   npx tsx bench/avro.ts [messages=10000]
// Uses DATABASE_URL when set, else the embedded PostgreSQL; works in a throw-away schema dropped at the end.
import { randomBytes } from 'node:crypto'
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry'
import { Kafka, logLevel } from '../src/index.js'
import { quoteIdent } from '../src/db/identifiers.js'
import { PgSchemaRegistry, startSchemaRegistry } from '../src/registry/index.js'

const COUNT = Number(process.argv[2] ?? 10_000)
const BATCH = 500
const ROUNDS = 3
const SCHEMA = {
  type: 'record',
  name: 'PageView',
  namespace: 'bench',
  fields: [
    { name: 'urn', type: 'string' },
    { name: 'user', type: 'string' },
    { name: 'durationMs', type: 'long' },
    { name: 'score', type: 'double' },
    { name: 'tags', type: { type: 'array', items: 'string' } },
  ],
}

const event = (i: number) => ({
  urn: `urn:li:dataset:(urn:li:dataPlatform:kafka,Topic${i % 97},PROD)`,
  user: `urn:li:corpuser:user${i % 13}`,
  durationMs: i * 7,
  score: i / 3,
  tags: ['a', 'bb', 'ccc'].slice(0, i % 4),
})

interface Codec {
  name: string
  encode(v: ReturnType<typeof event>): Promise<Buffer>
  decode(b: Buffer): Promise<unknown>
}

async function run(kafka: Kafka, codec: Codec, count: number): Promise<{ name: string; seconds: number; perSecond: number; bytes: number }> {
  const topic = `bench-${codec.name}-${randomBytes(3).toString('hex')}`
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: `${topic}-group`, maxWaitTimeInMs: 100 })
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()])
  await admin.createTopics({ topics: [{ topic, numPartitions: 4 }] })
  await consumer.subscribe({ topic, fromBeginning: true })
  let decoded = 0
  let bytes = 0
  let finish!: () => void
  const done = new Promise<void>((r) => (finish = r))
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        await codec.decode(m.value!)
        if (++decoded === count) finish()
      }
    },
  })
  const started = process.hrtime.bigint()
  for (let from = 0; from < count; from += BATCH) {
    const messages = []
    for (let i = from; i < Math.min(count, from + BATCH); i++) {
      const value = await codec.encode(event(i))
      bytes += value.length
      messages.push({ key: String(i), value })
    }
    await producer.send({ topic, messages })
  }
  await done
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  await consumer.disconnect()
  await Promise.all([producer.disconnect(), admin.disconnect()])
  return { name: codec.name, seconds, perSecond: count / seconds, bytes: bytes / count }
}

async function main(): Promise<void> {
  const schema = `bench_avro_${randomBytes(4).toString('hex')}`
  const kafka = new Kafka({ clientId: 'bench-avro', logLevel: logLevel.WARN, pgqueue: { schema, enabled: true } })
  const registry = await PgSchemaRegistry.open({ kafka }) // keeps the pool open for the whole run
  const server = await startSchemaRegistry({ registry })
  try {
    const client = new SchemaRegistry({ host: server.url })
    const { id } = await client.register({ type: SchemaType.AVRO, schema: JSON.stringify(SCHEMA) }, { subject: 'bench-value' })
    const codecs: Codec[] = [
      { name: 'raw', encode: async (v) => Buffer.from(JSON.stringify(v)), decode: async (b) => b },
      { name: 'json', encode: async (v) => Buffer.from(JSON.stringify(v)), decode: async (b) => JSON.parse(b.toString()) },
      { name: 'avro', encode: (v) => client.encode(id, v), decode: (b) => client.decode(b) },
    ]
    console.log(`${COUNT} messages x ${ROUNDS} rounds, batches of ${BATCH}, 4 partitions, payload compression ${kafka.config.payloadCompression}`)
    // the codec alone, without the queue: what Avro adds per message
    for (const codec of codecs) {
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < COUNT; i++) await codec.decode(await codec.encode(event(i)))
      const us = Number(process.hrtime.bigint() - t0) / 1e3 / COUNT
      console.log(`${codec.name.padEnd(5)} encode+decode only: ${us.toFixed(1)} µs/message`)
    }
    // warm-up (JIT, prepared statements, message partitions), then the measured runs
    for (const codec of codecs) await run(kafka, codec, Math.min(COUNT, 2000))
    // interleaved rounds, median per codec: single runs vary with checkpoints and autovacuum
    const results = new Map<string, Array<Awaited<ReturnType<typeof run>>>>()
    for (let round = 0; round < ROUNDS; round++) {
      for (const codec of codecs) results.set(codec.name, [...(results.get(codec.name) ?? []), await run(kafka, codec, COUNT)])
    }
    for (const [name, runs] of results) {
      const sorted = [...runs].sort((a, b) => a.seconds - b.seconds)
      const median = sorted[Math.floor(sorted.length / 2)]!
      const all = runs.map((r) => Math.round(r.perSecond)).join(', ')
      const perSecond = Math.round(median.perSecond)
      console.log(
        `${name.padEnd(5)} median ${median.seconds.toFixed(2)} s = ${perSecond} msg/s (runs: ${all})  avg value ${median.bytes.toFixed(1)} bytes`,
      )
    }
  } finally {
    await server.close()
    await registry.pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`)
    await registry.close()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
