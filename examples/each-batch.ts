// eachBatch with manual offset control (eachBatchAutoResolve: false): resolve each message once it is really
// done, heartbeat during long batches, commit mid-batch with commitOffsetsIfNecessary, stop early when the
// consumer is stopping or the batch went stale. A failure halfway through a batch then redelivers only the
// messages after the last resolved one. Same code on both transports:
//
//   npx tsx examples/each-batch.ts                                   # PostgreSQL
//   DATAHUB_MESSAGING_TRANSPORT=kafka KAFKA_BROKERS=localhost:9092 npx tsx examples/each-batch.ts
//
// transports: pgqueue kafka
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { createKafka, Kafka, logLevel, type EachBatchPayload } from 'kafkajs-pgqueue'

const env = { DATAHUB_MESSAGING_TRANSPORT: 'pgqueue', ...process.env } // the examples default to PostgreSQL

async function main(): Promise<void> {
  const kafka = createKafka(
    {
      clientId: 'each-batch',
      brokers: (process.env.KAFKA_BROKERS ?? 'localhost:9092').split(','),
      logLevel: logLevel.NOTHING, // the simulated failure below would log an error
      pgqueue: { enabled: true },
    },
    env,
  )
  const transport = kafka instanceof Kafka ? 'pgqueue' : 'kafka'
  const run = `${Date.now().toString(36)}-${process.pid}`
  const topic = `each-batch-${run}`
  const groupId = `each-batch-${run}`
  const total = 60
  const failAt = 25 // the first attempt at this message fails, as a flaky downstream call would

  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId, retry: { initialRetryTime: 100, retries: 5 } })
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()])
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
    await producer.send({ topic, messages: Array.from({ length: total }, (_, i) => ({ key: `k${i % 3}`, value: String(i) })) })

    const handled = new Map<number, number>() // message -> times handled
    let batches = 0
    let failed = false
    let finished!: () => void
    const allHandled = new Promise<void>((resolve) => (finished = resolve))

    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachBatchAutoResolve: false,
      autoCommitThreshold: 10, // commitOffsetsIfNecessary() commits once 10 resolved offsets are pending
      eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, uncommittedOffsets, isRunning, isStale }: EachBatchPayload) => {
        if (batch.isEmpty()) return
        batches++
        console.log(`batch ${batches}: offsets ${batch.firstOffset()}..${batch.lastOffset()} (lag ${batch.offsetLag()})`)
        for (const message of batch.messages) {
          if (!isRunning() || isStale()) return // stopping, or a seek/rebalance: leave the rest unresolved
          const n = Number(message.value!.toString())
          if (n === failAt && !failed) {
            failed = true
            const pending = uncommittedOffsets().topics.flatMap((t) => t.partitions.map((p) => p.offset))
            console.log(`  message ${n} failed: throwing; resolved but uncommitted offsets ${JSON.stringify(pending)} are committed first`)
            throw new Error(`downstream unavailable for message ${n}`)
          }
          handled.set(n, (handled.get(n) ?? 0) + 1)
          resolveOffset(message.offset) // done with this one: it will not be redelivered
          if (n % 10 === 9) {
            await heartbeat() // a long batch keeps the membership alive
            await commitOffsetsIfNecessary() // commits once autoCommitThreshold offsets are resolved
          }
        }
        if (handled.size === total) finished()
      },
    })
    const timedOut = delay(15_000, undefined, { ref: false }).then(() =>
      Promise.reject(new Error(`timed out after 15 s waiting for ${total} messages`)),
    )
    await Promise.race([allHandled, timedOut])
    await consumer.stop()

    const missing = Array.from({ length: total }, (_, i) => i).filter((i) => !handled.has(i))
    const repeated = [...handled].filter(([, times]) => times > 1).map(([n]) => n)
    assert.ok(failed, 'the simulated failure happened')
    assert.ok(missing.length === 0, `every message handled (missing ${missing.join()})`)
    assert.ok(repeated.length === 0, `no message handled twice (repeated ${repeated.join()})`)
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] })
    assert.ok(committed.partitions[0].offset === String(total), `committed offset ${committed.partitions[0].offset}, expected ${total}`)
    console.log(
      `each-batch on ${transport}: ${total} messages in ${batches} batches, a failure at ${failAt} redelivered only the unresolved rest, committed offset ${total}`,
    )
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()])
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
