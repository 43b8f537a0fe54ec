// A service that keeps its state in a compacted topic and rebuilds it at start: every account's latest balance,
// closed accounts deleted by tombstones. Compaction (cleanup.policy=compact) keeps the topic at about one record
// per account, so a restart reads the state, not its whole history. Plain KafkaJS code (docs/compaction.md).
//
//   npx tsx examples/compacted-state.ts                                   # PostgreSQL (embedded, or DATABASE_URL)
//   DATAHUB_MESSAGING_TRANSPORT=kafka KAFKA_BROKERS=localhost:9092 npx tsx examples/compacted-state.ts
//
// transports: pgqueue kafka
import assert from 'node:assert/strict'
import { createKafka, Kafka, logLevel, runMaintenance } from 'kafkajs-pgqueue'
import type { Kafka as KafkaJS } from 'kafkajs'

const env = { DATAHUB_MESSAGING_TRANSPORT: 'pgqueue', ...process.env }
const ACCOUNTS = 200
const UPDATES = 5
const CLOSED = 10

/**
 * The service's start-up: read the topic from the beginning up to the end it had when we started, applying each
 * record in order (a null value deletes the key). No committed offsets are needed: the topic is the state.
 */
async function rebuildState(kafka: KafkaJS, topic: string, run: string): Promise<{ state: Map<string, number>; read: number; tombstones: number }> {
  const admin = kafka.admin()
  await admin.connect()
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]))
  const groupId = `accounts-loader-${run}`
  const consumer = kafka.consumer({ groupId })
  await consumer.connect()
  const state = new Map<string, number>()
  let read = 0
  let tombstones = 0
  const pending = new Set([...ends].filter(([, high]) => high > 0n).map(([p]) => p))
  try {
    await consumer.subscribe({ topic, fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`state not rebuilt: ${read} records read`)), 30_000)
      if (pending.size === 0) resolve()
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          read++
          const key = message.key!.toString()
          if (message.value === null) {
            tombstones++
            state.delete(key)
          } else state.set(key, Number(JSON.parse(message.value.toString()).balance))
          if (BigInt(message.offset) + 1n >= ends.get(partition)!) pending.delete(partition)
          if (pending.size === 0) {
            clearTimeout(timer)
            resolve()
          }
        },
      })
    })
  } finally {
    await consumer.disconnect()
    // a loader group left registered would hold compaction back on PostgreSQL (docs/compaction.md)
    await admin.deleteGroups([groupId]).catch(() => undefined)
    await admin.disconnect()
  }
  return { state, read, tombstones }
}

async function main(): Promise<void> {
  const kafka = createKafka(
    {
      clientId: 'compacted-state',
      brokers: (process.env.KAFKA_BROKERS ?? 'localhost:9092').split(','),
      logLevel: logLevel.WARN,
      pgqueue: { enabled: true },
    },
    env,
  )
  console.log(`transport: ${kafka instanceof Kafka ? 'pgqueue (PostgreSQL)' : 'kafka'}`)
  const run = `${Date.now().toString(36)}-${process.pid}`
  const topic = `account-balances-${run}`

  const admin = kafka.admin()
  const producer = kafka.producer()
  await Promise.all([admin.connect(), producer.connect()])
  try {
    await admin.createTopics({
      topics: [
        {
          topic,
          numPartitions: 2,
          configEntries: [
            { name: 'cleanup.policy', value: 'compact' },
            { name: 'min.cleanable.dirty.ratio', value: '0.1' },
            { name: 'delete.retention.ms', value: '0' },
            { name: 'segment.ms', value: '100' },
          ],
        },
      ],
    })

    // --- yesterday: the service wrote every change of every account, then closed some accounts (tombstones)
    const expected = new Map<string, number>()
    for (let u = 0; u < UPDATES; u++) {
      const messages = Array.from({ length: ACCOUNTS }, (_, a) => {
        const balance = (u + 1) * 100 + a
        expected.set(`account-${a}`, balance)
        return { key: `account-${a}`, value: JSON.stringify({ balance }) }
      })
      await producer.send({ topic, messages })
    }
    const closed = Array.from({ length: CLOSED }, (_, a) => `account-${a}`)
    await producer.send({ topic, messages: closed.map((key) => ({ key, value: null })) })
    for (const key of closed) expected.delete(key)
    const written = ACCOUNTS * UPDATES + CLOSED
    console.log(`wrote ${written} records for ${ACCOUNTS} accounts, closed ${CLOSED}`)

    // --- overnight: compaction. On PostgreSQL it is a step of the maintenance run (hourly in-app by default, or
    // the CLI / pg_cron); here it runs once by hand. Kafka's log cleaner runs by itself, when it gets to it.
    if (kafka instanceof Kafka) {
      const { pool, tables, release } = await kafka.database()
      try {
        const report = await runMaintenance({ pool, tables, maintenance: kafka.config.maintenance })
        if (!report.skipped) console.log(`maintenance compacted ${report.compaction.deleted} superseded records`)
      } finally {
        await release()
      }
    }

    // --- today: the service restarts and rebuilds its state from the topic
    const { state, read, tombstones } = await rebuildState(kafka, topic, run)
    console.log(`rebuilt ${state.size} accounts from ${read} records (${tombstones} tombstones)`)
    assert.deepEqual(state, expected, 'the rebuilt state is every open account with its latest balance')
    if (kafka instanceof Kafka) {
      // compacted: the latest record of every open account and nothing older; the closed accounts' tombstones are
      // gone too, except where one is its partition's last record (that one always stays)
      assert.equal(read - tombstones, ACCOUNTS - CLOSED, 'a compacted topic holds one record per open account')
      assert.ok(tombstones <= 2, 'at most one tombstone per partition is left')
    } else {
      assert.ok(read <= written, 'never more records than were written')
    }
    console.log('ok: state rebuilt from the compacted topic')
  } finally {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined)
    await Promise.all([producer.disconnect(), admin.disconnect()])
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
