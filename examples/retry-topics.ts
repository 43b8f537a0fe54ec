// Non-blocking retries: a failing message goes to a retry topic at once and its partition moves on (order is not
// kept for it); a second consumer, in a group of its own, tries it again there once its backoff is over, and after
// maxAttempts it lands in the dead-letter topic of the topic it was first sent to. The same code runs on
// both transports:
//
//   DATAHUB_MESSAGING_TRANSPORT=pgqueue npx tsx examples/retry-topics.ts
//   DATAHUB_MESSAGING_TRANSPORT=kafka KAFKA_BROKERS=localhost:9092 npx tsx examples/retry-topics.ts
//
// transports: pgqueue kafka
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { createKafka, deadLetter, logLevel, readDeadLetters, type EachMessagePayload } from 'kafkajs-pgqueue'

async function main(): Promise<void> {
  const env = { ...process.env, DATAHUB_MESSAGING_TRANSPORT: process.env.DATAHUB_MESSAGING_TRANSPORT ?? 'pgqueue' }
  const kafka = createKafka(
    {
      clientId: 'retry-topics',
      brokers: (process.env.KAFKA_BROKERS ?? 'localhost:9092').split(','),
      logLevel: logLevel.WARN,
      pgqueue: { enabled: true },
    },
    env,
  )
  const run = `${Date.now().toString(36)}-${process.pid}`
  const topic = `payments-${run}`
  const groupId = `payments-${run}`
  const options = { topic: `${topic}.dlq`, mode: 'retry-topics', maxAttempts: 3, backoff: { initialMs: 200, maxMs: 400 } } as const
  const main = deadLetter(kafka, { ...options, groupId })
  const retry = deadLetter(kafka, { ...options, groupId: `${groupId}.retry` })
  const retryTopics = main.retryTopics(topic)
  for (const dl of [main, retry]) {
    dl.on(dl.events.RETRY, ({ payload }) =>
      console.log(
        `  ${payload.topic}@${payload.offset}: attempt ${payload.attempts} failed (${payload.error.message}); next in ${payload.retryTopic} after ${payload.delayMs} ms`,
      ),
    )
  }
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 })
  const retryConsumer = kafka.consumer({ groupId: `${groupId}.retry`, maxWaitTimeInMs: 200 })
  await Promise.all([admin.connect(), producer.connect(), consumer.connect(), retryConsumer.connect(), main.connect(), retry.connect()])
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [topic, `${topic}.dlq`, ...retryTopics].map((name) => ({ topic: name, numPartitions: 1 })),
    })
    await producer.send({ topic, messages: ['pay-1', 'gateway-busy', 'pay-3', 'corrupt'].map((value) => ({ key: 'customer-7', value })) })

    const paid: string[] = []
    let busyOnce = true
    let allPaid!: () => void
    const threePaid = new Promise<void>((resolve) => (allPaid = resolve))
    const pay = async ({ message }: EachMessagePayload) => {
      const value = message.value!.toString()
      if (value === 'corrupt') throw new Error('cannot parse payment')
      if (value === 'gateway-busy' && busyOnce) {
        busyOnce = false
        throw new Error('payment gateway busy')
      }
      paid.push(value)
      if (paid.length === 3) allPaid()
    }
    const moved = new Promise<void>((resolve) =>
      retry.on(retry.events.DEAD_LETTER, ({ payload }) => {
        console.log(`  ${payload.topic}@${payload.offset} dead-lettered to ${payload.deadLetterTopic} after ${payload.attempts} attempts`)
        resolve()
      }),
    )
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({ eachMessage: main.eachMessage(pay) })
    await retryConsumer.subscribe({ topics: retryTopics, fromBeginning: true })
    await retryConsumer.run({ eachMessage: retry.eachMessage(pay) })

    const timedOut = delay(30_000, undefined, { ref: false }).then(() => Promise.reject(new Error('timed out after 30 s')))
    await Promise.race([Promise.all([moved, threePaid]), timedOut])
    console.log(`paid: ${paid.join(', ')}`)
    // pay-3 did not wait for gateway-busy: it was paid first, gateway-busy on its retry
    assert.deepEqual(paid, ['pay-1', 'pay-3', 'gateway-busy'])

    const [entry] = await readDeadLetters(kafka, `${topic}.dlq`)
    console.log(
      `dead-letter entry: from ${entry?.origin?.topic}@${entry?.origin?.offset}, ${entry?.origin?.attempts} attempts, ${entry?.origin?.errorMessage}`,
    )
    assert.ok(
      entry?.value?.toString() === 'corrupt' && entry.origin?.topic === topic && entry.origin.offset === '3',
      'the dead letter names its first topic',
    )
  } finally {
    await Promise.all([consumer.disconnect(), retryConsumer.disconnect(), main.disconnect(), retry.disconnect()])
    await Promise.all([producer.disconnect(), admin.disconnect()])
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
