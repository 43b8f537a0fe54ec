// Message priorities (a pgQueue addition): `priority` 0..9 per message, 0 the most urgent, 5 the default.
// Within a partition a consumer gets urgent messages first, but not only: each fetch splits its batch across
// priority bands by weight (weighted fair queuing), so bulk work keeps moving under a flood of urgent work.
// The bands come from DATAHUB_PGQUEUE_PRIORITY_BANDS (default 70/20/10 for priorities 0-3 / 4-6 / 7-9):
//
//   npx tsx examples/priorities.ts
//   DATAHUB_PGQUEUE_PRIORITY_BANDS='[{"range":[0,4],"weight":1},{"range":[5,9],"weight":1}]' npx tsx examples/priorities.ts
//
// On Kafka the field is ignored (KafkaJS drops unknown message fields) and order is plain offset order.
// transports: pgqueue
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { Kafka, logLevel, type Message } from 'kafkajs-pgqueue'

const BATCH = 10 // messages per fetch and partition, small so that the split is visible

async function main(): Promise<void> {
  // options win over the environment; the bands are left to DATAHUB_PGQUEUE_PRIORITY_BANDS
  const kafka = new Kafka({ clientId: 'priorities', logLevel: logLevel.WARN, pgqueue: { enabled: true, consumerPoll: { maxBatchMessages: BATCH } } })
  const bands = kafka.config.priorityBands
  const usingDefault = process.env.DATAHUB_PGQUEUE_PRIORITY_BANDS === undefined
  console.log(
    `priority bands${usingDefault ? ' (default)' : ' (DATAHUB_PGQUEUE_PRIORITY_BANDS)'}:`,
    bands.map((b) => `${b.range[0]}-${b.range[1]}: weight ${b.weight}`).join(', '),
  )

  const run = `${Date.now().toString(36)}-${process.pid}`
  const topic = `jobs-${run}`
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: `workers-${run}` })
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()])
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
    // produced in the least convenient order: the bulk reports first, the alerts last
    const kinds = [
      { kind: 'report', priority: 9 },
      { kind: 'email', priority: 5 },
      { kind: 'alert', priority: 0 },
    ]
    const messages: Array<Message & { priority: number }> = kinds.flatMap(({ kind, priority }) =>
      Array.from({ length: BATCH }, (_, i) => ({ value: `${kind}-${i}`, priority })),
    )
    await producer.send({ topic, messages })
    console.log(`produced ${messages.length} jobs: ${kinds.map((k) => `${BATCH} ${k.kind}s (priority ${k.priority})`).join(', ')}`)

    const batches: number[][] = []
    let total = 0
    let done!: () => void
    const allConsumed = new Promise<void>((resolve) => (done = resolve))
    const priorityOf = new Map(kinds.map((k) => [k.kind, k.priority]))
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachBatch: async ({ batch }) => {
        if (batch.isEmpty()) return
        const priorities = batch.messages.map((m) => priorityOf.get(m.value!.toString().split('-')[0])!)
        batches.push(priorities)
        console.log(
          `  batch ${batches.length}: ${batch.messages.map((m) => m.value!.toString().split('-')[0][0]).join('')}  (priorities ${priorities.join('')})`,
        )
        total += batch.messages.length
        if (total >= messages.length) done()
      },
    })
    const timedOut = delay(15_000, undefined, { ref: false }).then(() =>
      Promise.reject(new Error(`timed out after 15 s waiting for ${messages.length} jobs`)),
    )
    await Promise.race([allConsumed, timedOut])
    await consumer.stop()

    assert.ok(total === messages.length, `consumed ${total} of ${messages.length}`)
    // within a batch the most urgent come first
    for (const [i, b] of batches.entries())
      assert.ok(
        b.every((p, j) => j === 0 || p >= b[j - 1]),
        `batch ${i + 1} in priority order`,
      )
    // the first batch is led by the alerts although they were produced last ...
    assert.ok(batches[0][0] === 0, 'the first message consumed is an alert')
    // ... and with the default bands it is split 7/2/1: the bulk band is not starved
    if (usingDefault) {
      const count = (p: number) => batches[0].filter((x) => x === p).length
      assert.ok(count(0) === 7 && count(5) === 2 && count(9) === 1, `first batch split 7/2/1, got ${count(0)}/${count(5)}/${count(9)}`)
    }
    console.log(`priorities: ${total} jobs in ${batches.length} batches, urgent first, each batch split across the bands by weight`)
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()])
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
