// Quick start: create a topic, produce keyed messages, consume them with a consumer group — plain KafkaJS code.
//
//   npx tsx examples/quickstart.ts                                   # PostgreSQL (embedded, or DATABASE_URL)
//   DATAHUB_MESSAGING_TRANSPORT=kafka KAFKA_BROKERS=localhost:9092 npx tsx examples/quickstart.ts
//
// transports: pgqueue kafka
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { createKafka, Kafka, logLevel, type EachMessagePayload } from 'kafkajs-pgqueue'

// createKafka picks the transport from DATAHUB_MESSAGING_TRANSPORT (unset means kafka). The examples default it
// to pgqueue so they run with nothing installed; a service leaves the choice to its deployment.
const env = { DATAHUB_MESSAGING_TRANSPORT: 'pgqueue', ...process.env }

async function main(): Promise<void> {
  const kafka = createKafka(
    {
      clientId: 'quickstart',
      brokers: (process.env.KAFKA_BROKERS ?? 'localhost:9092').split(','), // ignored on PostgreSQL
      logLevel: logLevel.WARN,
      pgqueue: { enabled: true }, // create the tables on connect (ignored on Kafka)
    },
    env,
  )
  console.log(`transport: ${kafka instanceof Kafka ? 'pgqueue (PostgreSQL)' : 'kafka'}`)

  const run = `${Date.now().toString(36)}-${process.pid}` // the embedded database persists between runs
  const topic = `quickstart-orders-${run}`
  const groupId = `quickstart-billing-${run}`

  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId })
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()])
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] })

    // --- produce: the same key always lands on the same partition, so one customer's orders stay in order
    const messages = Array.from({ length: 12 }, (_, i) => ({
      key: `customer-${i % 4}`,
      value: JSON.stringify({ orderId: i, amount: 10 + i }),
      headers: { 'content-type': 'application/json' },
    }))
    const sent = await producer.send({ topic, messages })
    console.log(`produced ${messages.length} messages:`, sent.map((r) => `p${r.partition}@${r.baseOffset}`).join(' '))

    // --- consume: a consumer group reads every partition, commits its progress, and resumes there next time
    const received: EachMessagePayload[] = []
    let allReceived!: () => void
    const done = new Promise<void>((resolve) => (allReceived = resolve))
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async (payload) => {
        received.push(payload)
        const { orderId } = JSON.parse(payload.message.value!.toString())
        console.log(`  consumed ${payload.message.key} order ${orderId} (partition ${payload.partition}, offset ${payload.message.offset})`)
        if (received.length === messages.length) allReceived()
      },
    })
    const timedOut = delay(15_000, undefined, { ref: false }).then(() =>
      Promise.reject(new Error(`timed out after 15 s waiting for ${messages.length} messages`)),
    )
    await Promise.race([done, timedOut])
    await consumer.stop() // commits what was consumed

    // --- check the outcome
    const orderIds = received.map((p) => JSON.parse(p.message.value!.toString()).orderId).sort((a, b) => a - b)
    assert.ok(orderIds.join() === messages.map((_, i) => i).join(), `every order exactly once, got ${orderIds.join()}`)
    for (const key of new Set(messages.map((m) => m.key))) {
      const ofKey = received.filter((p) => p.message.key?.toString() === key)
      assert.ok(new Set(ofKey.map((p) => p.partition)).size === 1, `${key} stays on one partition`)
      const ids = ofKey.map((p) => JSON.parse(p.message.value!.toString()).orderId)
      assert.ok(
        ids.every((id, i) => i === 0 || id > ids[i - 1]),
        `${key}'s orders arrive in order`,
      )
    }
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] })
    const ends = await admin.fetchTopicOffsets(topic)
    for (const { partition, offset } of committed.partitions) {
      const high = ends.find((e) => e.partition === partition)!.high
      assert.ok(offset === high || (high === '0' && offset === '-1'), `partition ${partition} committed at its end (${offset} vs ${high})`)
    }
    console.log(`quickstart: ${received.length} of ${messages.length} messages consumed, offsets committed`)
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()])
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
