// Exactly-once consume-transform-produce: read payments, convert them, write the results and the consumer's
// offsets in ONE transaction (producer.transaction() + sendOffsets). On PostgreSQL that is one database
// transaction: either the outputs and the new position commit together, or neither does. A simulated crash
// between send and commit shows it: the aborted outputs are never seen and the batch is processed again.
//
//   npx tsx examples/exactly-once.ts
//
// transports: pgqueue
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { Kafka, logLevel, type EachMessagePayload } from 'kafkajs-pgqueue'

async function main(): Promise<void> {
  const kafka = new Kafka({ clientId: 'exactly-once', logLevel: logLevel.NOTHING, pgqueue: { enabled: true } })
  const run = `${Date.now().toString(36)}-${process.pid}`
  const input = `payments-${run}`
  const output = `payments-eur-${run}`
  const groupId = `fx-converter-${run}`
  const total = 40
  const crashOn = 17 // the first transaction containing this payment aborts instead of committing

  const admin = kafka.admin()
  const source = kafka.producer()
  // a transactional producer: its transactionalId fences off a zombie instance of the same worker
  const producer = kafka.producer({ transactionalId: `fx-converter-${run}`, idempotent: true, maxInFlightRequests: 1 })
  const converter = kafka.consumer({ groupId, retry: { initialRetryTime: 100, retries: 5 } })
  const reader = kafka.consumer({ groupId: `audit-${run}` }) // reads the results: committed transactions only
  await Promise.all([admin.connect(), source.connect(), producer.connect(), converter.connect(), reader.connect()])
  try {
    await admin.createTopics({
      topics: [
        { topic: input, numPartitions: 2 },
        { topic: output, numPartitions: 2 },
      ],
    })
    const payments = Array.from({ length: total }, (_, i) => ({ id: i, usdCents: 1000 + i * 37 }))
    await source.send({ topic: input, messages: payments.map((p) => ({ key: `account-${p.id % 7}`, value: JSON.stringify(p) })) })

    let crashed = false
    let transactions = 0
    await converter.subscribe({ topic: input, fromBeginning: true })
    await converter.run({
      autoCommit: false, // the transaction carries the offsets
      eachBatch: async ({ batch }) => {
        if (batch.isEmpty()) return
        const tx = await producer.transaction()
        try {
          await tx.send({
            topic: output,
            messages: batch.messages.map((m) => {
              const p = JSON.parse(m.value!.toString()) as { id: number; usdCents: number }
              return { key: m.key, value: JSON.stringify({ id: p.id, eurCents: Math.round(p.usdCents * 0.92) }) }
            }),
          })
          await tx.sendOffsets({
            consumerGroupId: groupId,
            topics: [{ topic: input, partitions: [{ partition: batch.partition, offset: String(BigInt(batch.lastOffset()) + 1n) }] }],
          })
          const ids = batch.messages.map((m) => JSON.parse(m.value!.toString()).id as number)
          if (!crashed && ids.includes(crashOn)) {
            crashed = true
            throw new Error(`simulated crash before commit (batch of ${ids.length} with payment ${crashOn})`)
          }
          await tx.commit()
          transactions++
        } catch (err) {
          if (tx.isActive()) await tx.abort() // outputs and offsets of this batch vanish together
          console.log(`  aborted: ${(err as Error).message}; the batch is delivered again`)
          throw err
        }
      },
    })

    const results = new Map<number, number>()
    let seen = 0
    let done!: () => void
    const allConverted = new Promise<void>((resolve) => (done = resolve))
    await reader.subscribe({ topic: output, fromBeginning: true })
    await reader.run({
      eachMessage: async ({ message }: EachMessagePayload) => {
        const { id, eurCents } = JSON.parse(message.value!.toString())
        results.set(id, eurCents)
        if (++seen >= total) done()
      },
    })
    const timedOut = delay(15_000, undefined, { ref: false }).then(() =>
      Promise.reject(new Error(`timed out after 15 s waiting for ${total} converted payments`)),
    )
    await Promise.race([allConverted, timedOut])
    await Promise.all([converter.stop(), reader.stop()])

    assert.ok(crashed, 'the simulated crash happened')
    assert.ok(seen === total && results.size === total, `each payment converted exactly once (${seen} results, ${results.size} distinct)`)
    // nothing else is in the output topic: the aborted transaction left no messages and no offsets behind
    const outEnd = (await admin.fetchTopicOffsets(output)).reduce((n, p) => n + Number(p.high), 0)
    assert.ok(outEnd === total, `output topic holds ${outEnd} messages, expected ${total}`)
    // and the group's position moved only with committed transactions
    const [committed] = await admin.fetchOffsets({ groupId, topics: [input] })
    const inEnds = await admin.fetchTopicOffsets(input)
    for (const { partition, offset } of committed.partitions) {
      const high = inEnds.find((e) => e.partition === partition)!.high
      assert.ok(offset === high || (high === '0' && offset === '-1'), `partition ${partition}: committed ${offset}, end ${high}`)
    }
    console.log(`exactly-once: ${total} payments -> ${results.size} conversions in ${transactions} committed transactions, 1 aborted, no duplicates`)
  } finally {
    await Promise.all([reader.disconnect(), converter.disconnect(), producer.disconnect(), source.disconnect(), admin.disconnect()])
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
