// One program, two transports: createKafka() returns real KafkaJS or the PostgreSQL implementation depending on
// DATAHUB_MESSAGING_TRANSPORT, and everything after that line is the same code. Run it both ways:
//
//   DATAHUB_MESSAGING_TRANSPORT=pgqueue npx tsx examples/transport-toggle.ts
//   DATAHUB_MESSAGING_TRANSPORT=kafka KAFKA_BROKERS=localhost:9092 npx tsx examples/transport-toggle.ts
//
// transports: pgqueue kafka
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { createKafka, Kafka, logLevel } from 'kafkajs-pgqueue'

async function main(): Promise<void> {
  const variable = process.env.DATAHUB_MESSAGING_TRANSPORT
  // unset means kafka for createKafka; this example falls back to pgqueue so it runs without a broker
  const env = { ...process.env, DATAHUB_MESSAGING_TRANSPORT: variable ?? 'pgqueue' }
  const kafka = createKafka(
    {
      clientId: 'transport-toggle',
      brokers: (process.env.KAFKA_BROKERS ?? 'localhost:9092').split(','),
      logLevel: logLevel.WARN,
      pgqueue: { enabled: true }, // only read on pgqueue: a stray pgQueue setting cannot break a Kafka deployment
    },
    env,
  )
  const transport = kafka instanceof Kafka ? 'pgqueue' : 'kafka'
  console.log(`DATAHUB_MESSAGING_TRANSPORT=${variable ?? '(unset)'} -> transport: ${transport}`)
  if (kafka instanceof Kafka) {
    const { connection, schema, tablePrefix } = kafka.config
    console.log(`  PostgreSQL from ${connection.source}, tables ${schema}.${tablePrefix}_*`)
  }

  const run = `${Date.now().toString(36)}-${process.pid}`
  const topic = `toggle-events-${run}`
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: `toggle-${run}` })
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()])
  try {
    // the cluster as each transport describes it: Kafka brokers, or the PostgreSQL server
    const cluster = await admin.describeCluster()
    console.log(`  cluster ${cluster.clusterId}: ${cluster.brokers.map((b) => `${b.host}:${b.port}`).join(', ')}`)

    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })
    await producer.send({
      topic,
      messages: [
        { key: 'a', value: `hello from ${transport}` },
        { key: 'b', value: 'second' },
      ],
    })

    const values: string[] = []
    let done!: () => void
    const bothReceived = new Promise<void>((resolve) => (done = resolve))
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value!.toString())
        if (values.length === 2) done()
      },
    })
    const timedOut = delay(15_000, undefined, { ref: false }).then(() => Promise.reject(new Error('timed out after 15 s waiting for two messages')))
    await Promise.race([bothReceived, timedOut])
    assert.ok([...values].sort().join() === [`hello from ${transport}`, 'second'].sort().join(), `received ${values.join()}`)
    console.log(`transport-toggle: ran on ${transport}, received ${JSON.stringify(values)}`)
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()])
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
