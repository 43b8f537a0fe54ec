// Poison messages: a handler that always fails on one message is retried with backoff, then the message goes to a
// dead-letter topic (with its origin and error in headers) and the partition moves on, in order. The same code
// runs on both transports:
//
//   DATAHUB_MESSAGING_TRANSPORT=pgqueue npx tsx examples/dead-letter.ts
//   DATAHUB_MESSAGING_TRANSPORT=kafka KAFKA_BROKERS=localhost:9092 npx tsx examples/dead-letter.ts
//
// transports: pgqueue kafka
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { createKafka, deadLetter, logLevel, readDeadLetters } from 'kafkajs-pgqueue'

async function main(): Promise<void> {
  const env = { ...process.env, DATAHUB_MESSAGING_TRANSPORT: process.env.DATAHUB_MESSAGING_TRANSPORT ?? 'pgqueue' }
  const kafka = createKafka(
    {
      clientId: 'dead-letter',
      brokers: (process.env.KAFKA_BROKERS ?? 'localhost:9092').split(','),
      logLevel: logLevel.WARN,
      pgqueue: { enabled: true },
    },
    env,
  )
  const run = `${Date.now().toString(36)}-${process.pid}`
  const topic = `invoices-${run}`
  const groupId = `billing-${run}`
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 })
  const dl = deadLetter(kafka, { groupId, maxAttempts: 3, backoff: { initialMs: 100, maxMs: 400 } })
  dl.on(dl.events.RETRY, ({ payload }) =>
    console.log(`  attempt ${payload.attempts} of offset ${payload.offset} failed (${payload.error.message}); again in ${payload.delayMs} ms`),
  )
  await Promise.all([admin.connect(), producer.connect(), consumer.connect(), dl.connect()])
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic, numPartitions: 1 },
        { topic: `${topic}.dlq`, numPartitions: 1 },
      ],
    })
    await producer.send({ topic, messages: ['invoice-1', 'corrupt', 'invoice-3'].map((value) => ({ key: 'customer-7', value })) })

    const billed: string[] = []
    let billedBoth!: () => void
    const bothBilled = new Promise<void>((resolve) => (billedBoth = resolve))
    const moved = new Promise<void>((resolve) =>
      dl.on(dl.events.DEAD_LETTER, ({ payload }) => {
        console.log(`  offset ${payload.offset} dead-lettered to ${payload.deadLetterTopic} after ${payload.attempts} attempts`)
        resolve()
      }),
    )
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      eachMessage: dl.eachMessage(async ({ message }) => {
        const value = message.value!.toString()
        if (value === 'corrupt') throw new Error('cannot parse invoice')
        billed.push(value)
        if (billed.length === 2) billedBoth()
      }),
    })
    // the message after the poison one is billed only once the poison one has been moved (order is kept)
    const timedOut = delay(20_000, undefined, { ref: false }).then(() =>
      Promise.reject(new Error('timed out after 20 s waiting for the dead-letter move')),
    )
    await Promise.race([Promise.all([moved, bothBilled]), timedOut])
    console.log(`billed in order: ${billed.join(', ')}`)
    assert.ok(billed.join() === 'invoice-1,invoice-3', 'the partition moved on past the poison message, in order')

    const [entry] = await readDeadLetters(kafka, `${topic}.dlq`)
    console.log(
      `dead-letter entry: from ${entry?.origin?.topic}/${entry?.origin?.partition}@${entry?.origin?.offset}, ${entry?.origin?.attempts} attempts, ${entry?.origin?.errorClass}: ${entry?.origin?.errorMessage}`,
    )
    assert.ok(entry?.value?.toString() === 'corrupt' && entry.origin?.offset === '1', 'the dead-letter topic holds the poison message and its origin')
  } finally {
    await Promise.all([consumer.disconnect(), dl.disconnect()])
    await Promise.all([producer.disconnect(), admin.disconnect()])
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
