// A traced app for compat-tests/suite/tracing.test.ts. Prints one JSON line: the finished spans and what the
// handlers saw. MODE=roundtrip: send one message on the backend under test (DATAHUB_MESSAGING_TRANSPORT) inside
// a root span and consume it. MODE=bridge: Kafka -> pgQueue -> Kafka, each hop sent from inside the previous
// hop's eachMessage, so one trace must run through both transports. EACH_BATCH=1: handlers are eachBatch.
import { exporter } from './otelSetup.js'
import { trace, type Span } from '@opentelemetry/api'
import type { Consumer, Kafka as KafkaJS, KafkaMessage, Producer } from 'kafkajs'
import kafkajs from 'kafkajs'
import { Kafka as PgQueueKafka } from '../../src/kafka.js'
import { createKafka } from '../../src/transport.js'

const env = (name: string) =>
  process.env[name] ??
  (() => {
    throw new Error(`missing ${name}`)
  })()
const run = `${Date.now().toString(36)}${process.pid}`
const pgqueue = { connectionString: process.env.PG_URL, schema: process.env.PG_SCHEMA, enabled: true }
const brokers = (process.env.KAFKA_BROKERS ?? 'unused:9092').split(',')
const logLevel = kafkajs.logLevel.NOTHING
const seen: Array<{ topic: string; traceparent?: string; activeSpanId?: string }> = []
const cleanups: Array<() => Promise<void>> = []

function record(topic: string, message: KafkaMessage): void {
  seen.push({ topic, traceparent: message.headers?.traceparent?.toString(), activeSpanId: trace.getActiveSpan()?.spanContext().spanId })
}

async function ready(
  kafka: KafkaJS,
  topic: string,
): Promise<{ producer: Producer; consumer: (handle: (m: KafkaMessage) => Promise<void>) => Promise<Consumer> }> {
  const admin = kafka.admin()
  await admin.connect()
  // a KRaft broker may answer the leader wait's metadata request with UNKNOWN_TOPIC_OR_PARTITION just after the
  // topic was made (retriable); asked again, createTopics finds the topic and waits for its leader once more
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
      break
    } catch (e) {
      if (!(e as { retriable?: boolean }).retriable || attempt === 5) throw e
      await new Promise((r) => setTimeout(r, 200 * attempt))
    }
  }
  await admin.disconnect()
  const producer = kafka.producer()
  await producer.connect()
  cleanups.push(() => producer.disconnect())
  return {
    producer,
    consumer: async (handle) => {
      const consumer = kafka.consumer({ groupId: `g-${topic}`, maxWaitTimeInMs: 100 })
      await consumer.connect()
      await consumer.subscribe({ topic, fromBeginning: true })
      if (process.env.EACH_BATCH) {
        await consumer.run({
          eachBatch: async ({ batch }) => {
            for (const message of batch.messages) {
              record(topic, message)
              await handle(message)
            }
          },
        })
      } else {
        await consumer.run({
          eachMessage: async ({ message }) => {
            record(topic, message)
            await handle(message)
          },
        })
      }
      cleanups.unshift(() => consumer.disconnect())
      return consumer
    },
  }
}

function inRootSpan(work: () => Promise<void>): Promise<void> {
  return trace.getTracer('app').startActiveSpan('app', async (root: Span) => {
    try {
      await work()
    } finally {
      root.end()
    }
  })
}

async function main() {
  let done!: () => void
  const finished = new Promise<void>((resolve) => (done = resolve))
  if (env('MODE') === 'roundtrip') {
    const kafka = createKafka({ clientId: 'traced', brokers, logLevel, pgqueue })
    const topic = `traced-${run}`
    const t = await ready(kafka, topic)
    await t.consumer(async () => done())
    await inRootSpan(async () => void (await t.producer.send({ topic, messages: [{ key: 'k', value: 'v', headers: { app: 'yes' } }] })))
  } else {
    const onKafka = new kafkajs.Kafka({ clientId: 'bridge-kafka', brokers, logLevel })
    const onPg = new PgQueueKafka({ clientId: 'bridge-pg', logLevel, pgqueue })
    const [first, middle, last] = [`bridge-in-${run}`, `bridge-mid-${run}`, `bridge-out-${run}`]
    const a = await ready(onKafka, first)
    const b = await ready(onPg as unknown as KafkaJS, middle)
    const c = await ready(onKafka, last)
    await a.consumer(async (m) => void (await b.producer.send({ topic: middle, messages: [{ value: m.value }] })))
    await b.consumer(async (m) => void (await c.producer.send({ topic: last, messages: [{ value: m.value }] })))
    await c.consumer(async () => done())
    await inRootSpan(async () => void (await a.producer.send({ topic: first, messages: [{ value: 'hop' }] })))
  }
  await finished
  for (const cleanup of cleanups) await cleanup()
  const spans = exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    kind: s.kind,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    attributes: s.attributes,
    links: s.links.map((l) => l.context.spanId),
  }))
  process.stdout.write(`${JSON.stringify({ spans, seen })}\n`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
