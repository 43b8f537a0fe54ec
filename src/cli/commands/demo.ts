// The zero-setup demo of examples/demo.ts as a command: embedded PostgreSQL unless a database is configured, a
// topic, keyed messages with headers, a consumer group reading them back, and the group's committed offsets.
import type { Writable } from 'node:stream'
import type { Kafka } from '../../kafka.js'
import { CONNECTION_OPTIONS, positionals, type Command } from '../args.js'
import { cliKafka } from '../connect.js'

const TOPIC = 'demo-orders'
const GROUP = 'demo-group'

export async function runDemo(kafka: Kafka, out: Writable): Promise<number> {
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: GROUP })
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()])
  try {
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3 }] })
    const runId = Date.now().toString(36)
    const messages = Array.from({ length: 9 }, (_, i) => ({
      key: `customer-${i % 3}`,
      value: JSON.stringify({ order: i, run: runId }),
      headers: { 'x-source': 'demo' },
    }))
    const metadata = await producer.send({ topic: TOPIC, messages })
    out.write(`produced ${metadata.map((m) => `partition ${m.partition} @ offset ${m.baseOffset}`).join(', ')}\n`)

    let received = 0
    let allReceived!: () => void
    const done = new Promise<void>((resolve) => (allReceived = resolve))
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const body = JSON.parse(message.value!.toString())
        if (body.run !== runId) return // messages of earlier demo runs
        out.write(`consumed ${message.key} -> order ${body.order} (partition ${partition}, offset ${message.offset})\n`)
        if (++received === messages.length) allReceived()
      },
    })
    await done
    await consumer.stop()
    const offsets = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] })
    out.write(`committed offsets ${JSON.stringify(offsets[0]!.partitions.map((p) => [p.partition, p.offset]))}\n`)
    out.write(`demo: ${received} of ${messages.length} messages consumed\n`)
    return received === messages.length ? 0 : 1
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()])
  }
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'produce and consume a few messages end to end (embedded PostgreSQL when none is configured)',
  options: CONNECTION_OPTIONS,
  async run(p, io) {
    positionals(p, [])
    return runDemo(cliKafka(p, io, { enabled: true }), io.stdout)
  },
}
