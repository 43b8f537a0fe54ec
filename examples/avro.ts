// Avro with a schema registry, all on PostgreSQL: starts the Confluent-compatible registry on a free port,
// registers a schema with @kafkajs/confluent-schema-registry (the client a Kafka app already uses), produces
// Avro-encoded messages and reads them back decoded. With no database configured it uses an embedded
// PostgreSQL (data in ./.pgdata); set DATABASE_URL to use your own.
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry'
import { Kafka, logLevel, startSchemaRegistry } from 'kafkajs-pgqueue'

const schema = {
  type: 'record',
  name: 'PageView',
  namespace: 'example.avro',
  fields: [
    { name: 'user', type: 'string' },
    { name: 'page', type: 'string' },
    { name: 'durationMs', type: 'long' },
    { name: 'referrer', type: ['null', 'string'], default: null },
  ],
}

async function main(): Promise<void> {
  const kafka = new Kafka({ clientId: 'avro-example', logLevel: logLevel.WARN, pgqueue: { enabled: true } })
  const registryServer = await startSchemaRegistry({ kafka, port: 0, basePath: '/schema-registry/api' })
  console.log(`schema registry at ${registryServer.url}`)
  const topic = 'avro-page-views'
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: 'avro-example-group' })
  await Promise.all([producer.connect(), consumer.connect()])
  try {
    const registry = new SchemaRegistry({ host: registryServer.url })
    const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: `${topic}-value` })
    console.log(`registered ${schema.namespace}.${schema.name} as schema id ${id} (subject ${topic}-value)`)

    const runId = Date.now().toString(36) // tells this run's messages from earlier runs on a persistent database
    const views = [
      { user: `alice-${runId}`, page: '/home', durationMs: 1200, referrer: null },
      { user: `bob-${runId}`, page: '/docs', durationMs: 5400, referrer: 'https://example.com' },
      { user: `carol-${runId}`, page: '/pricing', durationMs: 800, referrer: null },
    ]
    await producer.send({
      topic,
      messages: await Promise.all(views.map(async (v) => ({ key: v.user, value: await registry.encode(id, v) }))),
    })
    console.log(`produced ${views.length} Avro messages`)

    let received = 0
    await new Promise<void>((resolve, reject) => {
      consumer
        .subscribe({ topic, fromBeginning: true })
        .then(() =>
          consumer.run({
            eachMessage: async ({ partition, message }) => {
              const view = (await registry.decode(message.value!)) as (typeof views)[number]
              if (!view.user.endsWith(runId)) return // an earlier run's message
              console.log(`consumed partition ${partition} offset ${message.offset}: ${JSON.stringify(view)}`)
              if (++received === views.length) resolve()
            },
          }),
        )
        .catch(reject)
    })
    console.log(`avro example: ${received} of ${views.length} messages decoded`)
  } finally {
    await consumer.disconnect()
    await producer.disconnect()
    await registryServer.close()
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
