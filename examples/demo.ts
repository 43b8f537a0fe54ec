// The zero-setup demo: with no database configured it starts an embedded PostgreSQL (data in ./.pgdata),
// creates a topic, produces keyed messages with headers, reads them back with a consumer group, and shows the
// group's committed offsets. Point it at your own server with DATABASE_URL or DATAHUB_PGQUEUE_DATASOURCE_URL.
import { Kafka, logLevel } from 'kafkajs-pgqueue'

async function main(): Promise<void> {
  const kafka = new Kafka({ clientId: 'demo', logLevel: logLevel.INFO, pgqueue: { enabled: true } })
  const topic = 'demo-orders'
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: 'demo-group' })
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()])
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] })
    const runId = Date.now().toString(36)
    const messages = Array.from({ length: 9 }, (_, i) => ({
      key: `customer-${i % 3}`,
      value: JSON.stringify({ order: i, run: runId }),
      headers: { 'x-source': 'demo' },
    }))
    const metadata = await producer.send({ topic, messages })
    console.log('produced', metadata.map((m) => `partition ${m.partition} @ offset ${m.baseOffset}`).join(', '))

    let received = 0
    const done = new Promise<void>((resolve) => {
      void consumer.subscribe({ topic, fromBeginning: true }).then(() =>
        consumer.run({
          eachMessage: async ({ partition, message }) => {
            const body = JSON.parse(message.value!.toString())
            if (body.run !== runId) return // messages from earlier demo runs
            console.log(`consumed ${message.key} -> order ${body.order} (partition ${partition}, offset ${message.offset})`)
            if (++received === messages.length) resolve()
          },
        }),
      )
    })
    // fail instead of hanging if the messages never arrive
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      done,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('demo: messages did not arrive within 30 s')), 30_000))),
    ])
    clearTimeout(timer)
    await consumer.stop()
    const offsets = await admin.fetchOffsets({ groupId: 'demo-group', topics: [topic] })
    console.log('committed offsets', JSON.stringify(offsets[0].partitions.map((p) => [p.partition, p.offset])))
    console.log(`demo: ${received} of ${messages.length} messages consumed`)
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()])
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
